import Foundation
import PulseCrypto
import PulseServerStorage

/// The data folder's `answer-key.pem`, as versions before this one made it: the first key that signs sync answers
/// (issue 21), PKCS#8 PEM, 0600. The database is the only source of answer keys now (`answer_keys`: a box makes
/// its first key there, in the write transaction that finds the table empty, so two processes starting together
/// agree on one); a folder's file is adopted as the first key when the table is empty, and otherwise never read.
/// Nothing writes the file any more: one beside a restored database would name a key that database does not hold,
/// which is why `pulse-server restore` removes it.
public enum AnswerKeyFile {
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
