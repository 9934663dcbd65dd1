import PulseCrypto

/// The `X-Pulse-Device` header of the contract: `{deviceId};ts={unixSeconds};sig={base64url}`, and the
/// canonical string the signature covers:
///
///     METHOD "\n" PATH "\n" QUERY "\n" ts "\n" hex(SHA-256(body))
///
/// PATH and QUERY exactly as sent on the wire (nothing decoded or re-encoded; QUERY without its `?`,
/// empty when there is none), `ts` the header's decimal timestamp, the body's digest in lowercase hex (of
/// the empty string for a request without a body). The signature is ES256, IEEE P1363 (`r‖s`, 64 bytes),
/// base64url without padding. docs/server.md has a worked example that `DeviceSignatureTests` checks.
public struct DeviceSignature: Sendable, Equatable {
    public var deviceId: String
    public var timestamp: Int64
    public var signature: [UInt8]

    public init(deviceId: String, timestamp: Int64, signature: [UInt8]) {
        self.deviceId = deviceId
        self.timestamp = timestamp
        self.signature = signature
    }

    /// Parses the header's value. Strict: the three parts in this order, a device id of 32 lowercase hex
    /// digits, 1 to 12 decimal digits of timestamp, a non-empty base64url signature of at most 128
    /// characters (any decoded length: a wrong one simply does not verify). Nil for anything else.
    public static func parse(_ value: [UInt8]) -> DeviceSignature? {
        guard value.count <= 32 + 4 + 12 + 5 + 128 else { return nil }
        let parts = value.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        let id = String(decoding: parts[0], as: UTF8.self)
        guard DeviceID.isValid(id) else { return nil }
        let ts = parts[1], sig = parts[2]
        guard ts.count > 3, ts.count <= 3 + 12, ts.starts(with: Self.tsPrefix) else { return nil }
        var timestamp: Int64 = 0
        for byte in ts.dropFirst(3) {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            timestamp = timestamp * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        guard sig.count > 4, sig.starts(with: Self.sigPrefix), let signature = Base64URL.decode(bytes: sig.dropFirst(4)), !signature.isEmpty else {
            return nil
        }
        return DeviceSignature(deviceId: id, timestamp: timestamp, signature: signature)
    }

    private static let tsPrefix = Array("ts=".utf8)
    private static let sigPrefix = Array("sig=".utf8)

    /// The header value for these parts.
    public var headerValue: String { "\(deviceId);ts=\(timestamp);sig=\(Base64URL.encode(signature))" }

    /// The canonical string of a request: `method`, its `target` as sent (path and query), the header's
    /// timestamp and the body.
    public static func canonical(method: String, target: [UInt8], timestamp: Int64, body: [UInt8]?) -> [UInt8] {
        let split = target.firstIndex(of: UInt8(ascii: "?"))
        let path = target[..<(split ?? target.count)]
        let query = split.map { target[($0 + 1)...] } ?? []
        var out: [UInt8] = []
        out.reserveCapacity(method.utf8.count + target.count + 90)
        out += method.utf8
        out.append(0x0a)
        out += path
        out.append(0x0a)
        out += query
        out.append(0x0a)
        out += String(timestamp).utf8
        out.append(0x0a)
        out += Array(SHA256.hex(body ?? []).utf8)
        return out
    }

    /// True when the signature is a valid ES256 P1363 signature of `canonical` by `key`: the one check
    /// every device-scoped request goes through (the Wycheproof cases run through it too).
    public func isValid(for canonical: [UInt8], key: P256.PublicKey) -> Bool {
        key.isValidSignature(signature, for: canonical)
    }

    /// Signs a request as a device does (tests, the benchmark's load generator, a reference client).
    public static func sign(
        method: String, target: String, body: [UInt8]? = nil, deviceId: String, key: P256.PrivateKey, at timestamp: Int64
    ) throws -> DeviceSignature {
        let message = canonical(method: method, target: Array(target.utf8), timestamp: timestamp, body: body)
        return DeviceSignature(deviceId: deviceId, timestamp: timestamp, signature: try key.signature(for: message))
    }
}
