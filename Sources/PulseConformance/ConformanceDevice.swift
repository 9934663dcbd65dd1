import Foundation
import PulseCore
import PulseCrypto
import PulseDevice

/// A device the suite enrolled: an in-memory key, its id and scope, and signing with any timestamp.
final class ConformanceDevice: Sendable {
    let id: String
    let key: P256.PrivateKey
    let scopeKind: String
    let scopeId: String
    let certificate: String

    init(id: String, key: P256.PrivateKey, scopeKind: String, scopeId: String, certificate: String) {
        self.id = id
        self.key = key
        self.scopeKind = scopeKind
        self.scopeId = scopeId
        self.certificate = certificate
    }

    /// A key that was never enrolled, under a random device id: what an unknown device sends.
    static func stranger() throws -> ConformanceDevice {
        ConformanceDevice(id: Hex.encode(try SecureRandom.bytes(16)), key: try P256.PrivateKey(), scopeKind: "-", scopeId: "-", certificate: "")
    }

    /// The P1363 signature of a request (target as on the wire) at `timestamp`.
    func signature(_ method: String, _ target: String, body: [UInt8] = [], at timestamp: Int64) throws -> [UInt8] {
        try key.signature(for: RequestSigner.canonical(method: method, target: target, timestamp: timestamp, body: body))
    }

    /// `X-Pulse-Device` for a request (target as on the wire) at `timestamp`.
    func header(_ method: String, _ target: String, body: [UInt8] = [], at timestamp: Int64) throws -> (name: String, value: String) {
        ("X-Pulse-Device", "\(id);ts=\(timestamp);sig=\(Base64URL.encode(try signature(method, target, body: body, at: timestamp)))")
    }

    /// The same key for PulseDevice's client (the event stream).
    var deviceKey: any DeviceKey { MemoryKey(key: key) }

    private struct MemoryKey: DeviceKey {
        let key: P256.PrivateKey
        var publicKeySPKI: [UInt8] { key.publicKey.derRepresentation }
        func sign(_ message: [UInt8]) throws -> [UInt8] { try key.signature(for: message) }
    }

    /// The enrollment body for `token` with this device's key.
    static func enrollBody(token: String, key: P256.PrivateKey, publicKey: String? = nil) -> [UInt8] {
        JSONValue.object([
            "token": .string(token), "publicKey": .string(publicKey ?? Data(key.publicKey.derRepresentation).base64EncodedString()),
            "platform": "conformance", "name": "pulse-conformance",
        ]).canonicalBytes
    }
}
