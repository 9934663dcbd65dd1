import PulseCore
import PulseCrypto
import PulseServerStorage

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
    /// The timestamp as the header wrote it: what the canonical string holds (a canonical decimal, so
    /// one signature is valid for one header text only).
    public var timestampText: [UInt8]
    public var signature: [UInt8]

    public init(deviceId: String, timestamp: Int64, signature: [UInt8]) {
        self.deviceId = deviceId
        self.timestamp = timestamp
        self.timestampText = Array(String(timestamp).utf8)
        self.signature = signature
    }

    /// The most digits of `ts`: Unix seconds until the year 33658.
    public static let maxTimestampDigits = 12

    /// Parses the header's value. Strict: the three parts in this order, a device id of 32 lowercase hex
    /// digits, `ts` a canonical decimal (1 to 12 digits, no sign, no leading zero: `0` itself is the only
    /// number that starts with one), a non-empty base64url signature of at most 128 characters (any
    /// decoded length: a wrong one simply does not verify). Nil for anything else: the flat 404.
    public static func parse(_ bytes: [UInt8]) -> DeviceSignature? {
        // Runs on every device-scoped request: one pass over the bytes, nothing generic but the bounded number.
        guard bytes.count <= 32 + 4 + maxTimestampDigits + 5 + 128, bytes.count > 32 + 4 + 5 else { return nil }
        for index in 0..<32 {
            let byte = bytes[index]
            guard (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66) else { return nil }
        }
        guard bytes[32] == 0x3b, bytes[33] == 0x74, bytes[34] == 0x73, bytes[35] == 0x3d else { return nil }  // ";ts="
        // The digits end at the next ';' (looked for no further than one past the longest allowed).
        var index = 36
        while index < bytes.count, index <= 36 + maxTimestampDigits, bytes[index] != 0x3b { index += 1 }
        guard index < bytes.count, bytes.count - index > 5,
              let timestamp = BoundedDecimal.parse(bytes[36..<index], maxDigits: maxTimestampDigits, canonical: true)
        else { return nil }
        // ";sig="
        guard bytes[index] == 0x3b, bytes[index + 1] == 0x73, bytes[index + 2] == 0x69, bytes[index + 3] == 0x67,
              bytes[index + 4] == 0x3d,
              let signature = decodeBase64URL(bytes[(index + 5)...])
        else { return nil }
        var parsed = DeviceSignature(deviceId: String(decoding: bytes[0..<32], as: UTF8.self), timestamp: Int64(timestamp), signature: signature)
        parsed.timestampText = Array(bytes[36..<index])
        return parsed
    }

    /// Strict unpadded base64url, as `Base64URL.decode` (no padding, nothing outside the alphabet, no
    /// length 4k+1, zero unused bits), without its generic iteration: it costs a few hundred instructions
    /// here and tens of thousands through a generic call across modules. Nil for an empty text.
    static func decodeBase64URL(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        guard !text.isEmpty, text.count % 4 != 1 else { return nil }
        var out = [UInt8](repeating: 0, count: text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits: UInt32 = 0
        var written = 0
        for byte in text {
            let value: UInt8
            switch byte {
            case 0x41...0x5a: value = byte - 0x41
            case 0x61...0x7a: value = byte - 0x61 + 26
            case 0x30...0x39: value = byte - 0x30 + 52
            case 0x2d: value = 62
            case 0x5f: value = 63
            default: return nil
            }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out[written] = UInt8(truncatingIfNeeded: accumulator >> bits)
                written += 1
                accumulator &= (1 << bits) - 1
            }
        }
        guard accumulator == 0, written == out.count else { return nil }
        return out
    }

    /// The header value for these parts.
    public var headerValue: String { "\(deviceId);ts=\(timestamp);sig=\(Base64URL.encode(signature))" }

    /// The canonical string of this header's request: `method`, its `target` as sent (path and query), the
    /// header's `ts` exactly as written, and the body.
    public func canonical(method: String, target: [UInt8], body: [UInt8]?) -> [UInt8] {
        Self.canonical(method: method, target: target, timestampText: timestampText, body: body)
    }

    /// The canonical string of a request signed at `timestamp` (written as a canonical decimal).
    public static func canonical(method: String, target: [UInt8], timestamp: Int64, body: [UInt8]?) -> [UInt8] {
        canonical(method: method, target: target, timestampText: Array(String(timestamp).utf8), body: body)
    }

    /// The canonical string with `ts` given as its text.
    static func canonical(method: String, target: [UInt8], timestampText: [UInt8], body: [UInt8]?) -> [UInt8] {
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
        out += timestampText
        out.append(0x0a)
        if let body, !body.isEmpty { out += SHA256.hex(body).utf8 } else { out += emptyBodyDigest }
        return out
    }

    /// hex(SHA-256("")): the digest in the canonical string of every GET, computed once.
    private static let emptyBodyDigest = Array(SHA256.hex([UInt8]()).utf8)

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
