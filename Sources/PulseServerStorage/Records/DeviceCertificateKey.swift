import Foundation
import PulseCrypto

/// The server's own P-256 key that signs device certificates, kept in the data folder as
/// `device-cert-key.pem` (PKCS#8 PEM, 0600; `DataFolder` in PulseServer) or in PostgreSQL. Generated on first use; never overwritten; its public half
/// is published as a JWK set so the app can check its certificate.
public final class DeviceCertificateKey: Sendable {
    public let privateKey: P256.PrivateKey

    /// The key id: the RFC 7638 thumbprint of the public key (the `kid` of certificates and the JWK).
    public var keyId: String { privateKey.publicKey.jwkThumbprint }

    init(privateKey: P256.PrivateKey) { self.privateKey = privateKey }

    /// The key in the PKCS#8 PEM file at `path`.
    /// - Throws: `ServerError` when the file cannot be read or is not a P-256 PKCS#8 PEM key (its content is never quoted).
    public static func load(_ path: String) throws -> DeviceCertificateKey {
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
    public var jwk: String { privateKey.publicKey.jwk(kid: keyId) }

    /// `GET /api/sync/device-cert-keys` of a server with this key alone: `{"keys":[<JWK>]}`.
    public var jwkSet: String { "{\"keys\":[\(jwk)]}" }
}
