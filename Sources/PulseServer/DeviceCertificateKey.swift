import Foundation
import PulseCrypto
import PulseStore
import PulseSystem

/// The server's own P-256 key that signs device certificates, kept in the data folder as
/// `device-cert-key.pem` (PKCS#8 PEM, 0600). Generated on first use; never overwritten; its public half
/// is published as a JWK set so the app can check its certificate.
public final class DeviceCertificateKey: Sendable {
    public let privateKey: P256.PrivateKey

    /// The key id: the RFC 7638 thumbprint of the public key (the `kid` of certificates and the JWK).
    public var keyId: String { privateKey.publicKey.jwkThumbprint }

    init(privateKey: P256.PrivateKey) { self.privateKey = privateKey }

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

    static func load(_ path: String) throws -> DeviceCertificateKey {
        var pem: [UInt8]
        do { pem = Array(try Data(contentsOf: URL(fileURLWithPath: path))) } catch {
            throw ServerError(.storage, "\(path): cannot read: \((error as NSError).localizedDescription)")
        }
        defer { SecretBytes.wipe(&pem) }
        do {
            return try DeviceCertificateKey(pem: pem)
        } catch {
            throw ServerError(.unsafeFile, "\(path): not a P-256 private key in PKCS#8 PEM (\(error)); move it away to make a new one")
        }
    }

    /// A key from its PKCS#8 PEM bytes (as the file and the database keep it).
    init(pem: [UInt8]) throws {
        privateKey = try P256.PrivateKey(pemRepresentation: pem)
    }

    /// A new random key.
    static func generate() throws -> DeviceCertificateKey { DeviceCertificateKey(privateKey: try P256.PrivateKey()) }

    /// The PKCS#8 PEM bytes; the caller wipes them (`SecretBytes.wipe`) when done.
    func pem() throws -> [UInt8] { try privateKey.pemRepresentation().copyBytes() }

    /// The public half as a JWK with its `kid`.
    var jwk: String { privateKey.publicKey.jwk(kid: keyId) }

    private static func create(at path: String, folder: URL) throws {
        let key = try P256.PrivateKey()
        let pem = try key.pemRepresentation()
        // Staged as .tmp-device-cert-key.pem-<uuid>, then linked: the loser of a race keeps the winner's file.
        do throws(PathError) { _ = try FileSystem.createNew(path, with: pem, mode: 0o600) } catch where error.path == path {
            throw ServerError(.storage, "\(path): cannot create: \(error.errno)")
        } catch {
            throw StoreError(error)
        }
    }

    /// `GET /api/sync/device-cert-keys` of a server with this key alone: `{"keys":[<JWK>]}`.
    public var jwkSet: String { "{\"keys\":[\(jwk)]}" }
}
