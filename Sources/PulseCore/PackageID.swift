import PulseCrypto

/// A package's random id: 16 bytes from the DRBG as 32 lowercase hex digits. It is bound into every slide
/// key (docs/crypto.md), names the default secret file, and lets push refuse a target holding another package.
/// Parsed once where it is read (an index, a key table, `--package-id`); past that it is always valid.
public struct PackageID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public static let byteCount = 16

    /// The 32 lowercase hex digits.
    public let hex: String

    /// Parses an id; nil unless `text` is exactly 32 lowercase hex digits.
    public init?(_ text: some StringProtocol) {
        guard text.utf8.count == 2 * Self.byteCount, text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
        else { return nil }
        hex = String(text)
    }

    /// A new random id.
    public static func random() throws -> PackageID {
        PackageID(Hex.encode(try SecureRandom.bytes(byteCount)))!
    }

    /// The 16 raw bytes (what the key derivation binds).
    public var bytes: [UInt8] { Hex.decode(hex)! }

    public var description: String { hex }

    public static func < (lhs: PackageID, rhs: PackageID) -> Bool { lhs.hex < rhs.hex }
}

extension PackageID: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let id = PackageID(try container.decode(String.self)) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a package id (32 lowercase hex digits)")
        }
        self = id
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}
