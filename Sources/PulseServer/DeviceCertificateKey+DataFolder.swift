import Foundation
import PulseCrypto
import PulseServerStorage
import PulseStore
import PulseSystem

extension DeviceCertificateKey {
    /// The key of `folder`, generated and stored first when the folder has none. Two processes
    /// starting together agree on one key: the file is staged, then hard-linked into place, and the
    /// loser of that race loads the winner's key.
    /// - Throws: `ServerError` when the file is not a P-256 PKCS#8 PEM key (its content is never quoted).
    public static func loadOrCreate(in folder: DataFolder) throws -> DeviceCertificateKey {
        let path = folder.certificateKeyPath
        if !FileManager.default.fileExists(atPath: path) {
            try create(at: path, folder: folder.url)
        }
        try folder.checkPermissions()
        return try load(path)
    }

    /// The key in the data folder at `path`, if there is one (nil when the file does not exist; never creates it).
    /// - Throws: `ServerError` when the folder or file is loose, or the file is not a P-256 PKCS#8 PEM key.
    public static func existing(in folder: DataFolder) throws -> DeviceCertificateKey? {
        guard FileManager.default.fileExists(atPath: folder.certificateKeyPath) else { return nil }
        try folder.checkPermissions()
        return try load(folder.certificateKeyPath)
    }

    fileprivate static func create(at path: String, folder: URL) throws {
        let key = try P256.PrivateKey()
        let pem = try key.pemRepresentation()
        // Staged as .tmp-device-cert-key.pem-<uuid>, then linked: the loser of a race keeps the winner's file.
        do throws(PathError) { _ = try FileSystem.createNew(path, with: pem, mode: 0o600) } catch where error.path == path {
            throw ServerError(.storage, "\(path): cannot create: \(error.errno)")
        } catch {
            throw StoreError(error)
        }
    }
}
