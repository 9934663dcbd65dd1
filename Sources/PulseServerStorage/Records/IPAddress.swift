import PulseCore

/// An IPv4 or IPv6 address as 16 bytes (IPv4 as `::ffff:a.b.c.d`, so an IPv4-mapped IPv6 client
/// address matches IPv4 networks). Parsed by hand: the venue rule must not depend on resolver
/// behaviour or locale, and a request's address is untrusted input.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// True for an IPv4 address (stored IPv4-mapped).
    public var isIPv4: Bool { bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff }

    public init(bytes: [UInt8]) {
        precondition(bytes.count == 16)
        self.bytes = bytes
    }

    /// Parses dotted-quad IPv4 (`192.0.2.7`) or IPv6 text (`2001:db8::1`, `::ffff:192.0.2.7`);
    /// nil for anything else (zone ids, leading zeros in IPv4, brackets).
    public init?(_ text: some StringProtocol) {
        let utf8 = Array(text.utf8)
        if let v4 = Self.parseIPv4(utf8[...]) {
            self.init(bytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff] + v4)
        } else if let v6 = Self.parseIPv6(utf8) {
            self.init(bytes: v6)
        } else {
            return nil
        }
    }

    public var description: String {
        if isIPv4 { return bytes[12...].map(String.init).joined(separator: ".") }
        let groups = stride(from: 0, to: 16, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
        // RFC 5952: the longest run of two or more zero groups (the first if tied) becomes "::".
        var best = (start: -1, count: 0)
        var run = (start: -1, count: 0)
        for (index, group) in groups.enumerated() {
            if group == 0 {
                run = run.start < 0 ? (index, 1) : (run.start, run.count + 1)
                if run.count > best.count { best = run }
            } else {
                run = (-1, 0)
            }
        }
        let text = groups.map { String($0, radix: 16) }
        guard best.count >= 2 else { return text.joined(separator: ":") }
        let head = text[..<best.start].joined(separator: ":")
        let tail = text[(best.start + best.count)...].joined(separator: ":")
        return head + "::" + tail
    }

    static func parseIPv4(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        let parts = text.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var out: [UInt8] = []
        for part in parts {
            // A leading zero is refused: 010 is ambiguous (octal?).
            guard let value = BoundedDecimal.parse(part, maxDigits: 3, maximum: 255, canonical: true) else { return nil }
            out.append(UInt8(value))
        }
        return out
    }

    static func parseIPv6(_ text: [UInt8]) -> [UInt8]? {
        guard text.count >= 2, text.count <= 45 else { return nil }
        // Split at "::" (at most once).
        var head = text[...]
        var tail: ArraySlice<UInt8>? = nil
        if let range = firstDoubleColon(text) {
            head = text[..<range]
            tail = text[(range + 2)...]
            if tail.map({ firstDoubleColon(Array($0)) != nil }) == true { return nil }
        }
        guard var headWords = words(head, allowIPv4Tail: tail == nil) else { return nil }
        var tailWords: [UInt8] = []
        if let tail {
            guard let parsed = words(tail, allowIPv4Tail: true) else { return nil }
            tailWords = parsed
            guard headWords.count + tailWords.count <= 14 else { return nil }
            headWords += [UInt8](repeating: 0, count: 16 - headWords.count - tailWords.count)
        }
        let result = headWords + tailWords
        return result.count == 16 ? result : nil
    }

    private static func firstDoubleColon(_ text: [UInt8]) -> Int? {
        guard text.count >= 2 else { return nil }
        for index in 0..<(text.count - 1) where text[index] == UInt8(ascii: ":") && text[index + 1] == UInt8(ascii: ":") {
            return index
        }
        return nil
    }

    /// Colon-separated hex words as bytes; the last part may be a dotted IPv4 address.
    private static func words(_ text: ArraySlice<UInt8>, allowIPv4Tail: Bool) -> [UInt8]? {
        if text.isEmpty { return [] }
        let parts = text.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        var out: [UInt8] = []
        for (index, part) in parts.enumerated() {
            if index == parts.count - 1, part.contains(UInt8(ascii: ".")) {
                guard allowIPv4Tail, let v4 = parseIPv4(part) else { return nil }
                out += v4
                continue
            }
            guard (1...4).contains(part.count) else { return nil }
            var value: UInt16 = 0
            for byte in part {
                guard let digit = hexValue(byte) else { return nil }
                value = value << 4 | UInt16(digit)
            }
            out += [UInt8(value >> 8), UInt8(value & 0xff)]
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
