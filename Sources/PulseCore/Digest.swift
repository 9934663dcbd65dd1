import Foundation
import PulseCrypto

/// The SHA-256 of a blob's bytes as it names the blob: 64 lowercase hex digits. A `Digest` is checked
/// once, where the text arrives (a manifest, a listing, a file name, a request path); everything past
/// that edge can use it as a file or object name without checking again.
public struct Digest: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The 64 lowercase hex digits.
    public let hex: String

    /// Parses a blob name; nil unless `text` is exactly 64 lowercase hex digits.
    @inlinable
    public init?(hex text: some StringProtocol) {
        guard Hex.isDigestName(text) else { return nil }
        hex = String(text)
    }

    /// The digest of `bytes`.
    public init(of bytes: some ContiguousBytes) {
        hex = SHA256.hex(bytes)
    }

    /// The digest of a 32-byte SHA-256 value.
    public init?(bytes: [UInt8]) {
        guard bytes.count == SHA256.byteCount else { return nil }
        hex = Hex.encode(bytes)
    }

    public var description: String { hex }

    public static func < (lhs: Digest, rhs: Digest) -> Bool { lhs.hex < rhs.hex }
}

extension Digest: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let digest = Digest(hex: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a SHA-256 blob name (64 lowercase hex digits)")
        }
        self = digest
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}

extension JSONValue {
    /// A JSON string holding a blob name.
    public init(_ digest: Digest) { self = .string(digest.hex) }

    /// This value as a blob name, nil if it is not a string of 64 lowercase hex digits.
    public var digestValue: Digest? { stringValue.flatMap { Digest(hex: $0) } }
}
