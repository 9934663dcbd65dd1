import Foundation
import PulseCrypto
import PulseServerStorage
import PulseStore
import PulseSystem

/// The data folder's `answer-key.pem`: the first key that signs sync answers (issue 21), PKCS#8 PEM, 0600,
/// made like `device-cert-key.pem` (staged, then linked into place: two processes starting together agree
/// on one key). The database adopts it as its first answer key; rotated keys live in the database.
public enum AnswerKeyFile {
    /// The key of `folder`, generated and stored first when the folder has none.
    /// - Throws: `ServerError` when the folder or file is loose, or the file is not a P-256 PKCS#8 PEM key
    ///   (its content is never quoted).
    public static func loadOrCreate(in folder: DataFolder) throws -> P256.PrivateKey {
        let path = folder.answerKeyPath
        if !FileManager.default.fileExists(atPath: path) {
            let pem = try P256.PrivateKey().pemRepresentation()
            do throws(PathError) { _ = try FileSystem.createNew(path, with: pem, mode: 0o600) } catch where error.path == path {
                throw ServerError(.storage, "\(path): cannot create: \(error.errno)")
            } catch {
                throw StoreError(error)
            }
        }
        try folder.checkPermissions()
        return try load(path)
    }

    /// The key in `folder`, if there is one (nil when the file does not exist; never creates it).
    public static func existing(in folder: DataFolder) throws -> P256.PrivateKey? {
        guard FileManager.default.fileExists(atPath: folder.answerKeyPath) else { return nil }
        try folder.checkPermissions()
        return try load(folder.answerKeyPath)
    }

    /// The key in the PKCS#8 PEM file at `path`.
    /// - Throws: `ServerError` when it cannot be read or is not a P-256 PKCS#8 PEM key (never quoted).
    public static func load(_ path: String) throws -> P256.PrivateKey {
        var pem: [UInt8]
        do { pem = Array(try Data(contentsOf: URL(fileURLWithPath: path))) } catch {
            throw ServerError(.storage, "\(path): cannot read: \((error as NSError).localizedDescription)")
        }
        defer { SecretBytes.wipe(&pem) }
        do {
            return try P256.PrivateKey(pemRepresentation: pem)
        } catch {
            throw ServerError(.unsafeFile, "\(path): not a P-256 private key in PKCS#8 PEM (\(error)); move it away to make a new one")
        }
    }
}
