import PulseCrypto

/// `X-Pulse-Device: {deviceId};ts={unixSeconds};sig={base64url}` over the contract's canonical string
/// (section 2; docs/server.md has a worked example that `RequestSignerTests` checks):
///
///     METHOD "\n" PATH "\n" QUERY "\n" ts "\n" hex(SHA-256(body))
///
/// PATH and QUERY exactly as they go on the wire (nothing decoded or re-encoded, QUERY without its `?`,
/// empty when there is none), the body's digest in lowercase hex (of nothing for a request without a body).
public struct RequestSigner: Sendable {
    public let deviceId: String
    public let key: any DeviceKey

    public init(deviceId: String, key: any DeviceKey) {
        self.deviceId = deviceId
        self.key = key
    }

    /// The canonical string of a request whose request-target (path and query, as sent) is `target`.
    public static func canonical(method: String, target: String, timestamp: Int64, body: [UInt8]) -> [UInt8] {
        let path: Substring
        let query: Substring
        if let mark = target.firstIndex(of: "?") {
            path = target[..<mark]
            query = target[target.index(after: mark)...]
        } else {
            path = target[...]
            query = ""
        }
        return Array("\(method)\n\(path)\n\(query)\n\(timestamp)\n\(SHA256.hex(body))".utf8)
    }

    /// The header value for a request signed at `timestamp`.
    public func header(method: String, target: String, body: [UInt8], timestamp: Int64) throws -> String {
        let canonical = Self.canonical(method: method, target: target, timestamp: timestamp, body: body)
        let signature: [UInt8]
        do { signature = try key.sign(canonical) } catch {
            throw DeviceError(.storage, "the device key could not sign: \(error)")
        }
        guard signature.count == 64 else {
            throw DeviceError(.storage, "the device key returned a \(signature.count)-byte signature; ES256 in P1363 form is 64 bytes (convert DER)")
        }
        return "\(deviceId);ts=\(timestamp);sig=\(Base64URL.encode(signature))"
    }
}
