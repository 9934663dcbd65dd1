extension JSONValue {
    /// The canonical encoding: no insignificant white space, object keys sorted by their UTF-8 bytes,
    /// integers in decimal, strings with only `"`, `\` and control characters escaped.
    /// `packageVersion` hashes this form; equal values always give equal bytes.
    public var canonicalBytes: [UInt8] {
        var out: [UInt8] = []
        write(to: &out, indent: nil)
        return out
    }

    /// The same canonical order, indented by two spaces and ending in a newline: what manifest files hold,
    /// easy to read and still one encoding per value.
    public var prettyBytes: [UInt8] {
        var out: [UInt8] = []
        write(to: &out, indent: 0)
        out.append(0x0a)
        return out
    }

    // Built from bytes, without intermediate arrays or strings: a 300-slide manifest is written twice
    // per build (canonical to hash, pretty to store) and the key table once.
    private func write(to out: inout [UInt8], indent: Int?) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case let .bool(value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case let .int(value): Self.writeDecimal(value, to: &out)
        case let .double(value):
            // Manifests hold integers only; a double prints in Swift's shortest round-trip form.
            if value.rounded() == value && abs(value) < 1e15 {
                Self.writeDecimal(Int(value), to: &out)
            } else {
                out.append(contentsOf: String(value).utf8)
            }
        case let .string(value): Self.writeString(value, to: &out)
        case let .array(items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.newline(&out, indent.map { $0 + 1 })
                item.write(to: &out, indent: indent.map { $0 + 1 })
            }
            if !items.isEmpty { Self.newline(&out, indent) }
            out.append(UInt8(ascii: "]"))
        case let .object(fields):
            out.append(UInt8(ascii: "{"))
            let sorted = fields.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (index, field) in sorted.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.newline(&out, indent.map { $0 + 1 })
                Self.writeString(field.key, to: &out)
                out.append(UInt8(ascii: ":"))
                if indent != nil { out.append(UInt8(ascii: " ")) }
                field.value.write(to: &out, indent: indent.map { $0 + 1 })
            }
            if !sorted.isEmpty { Self.newline(&out, indent) }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func newline(_ out: inout [UInt8], _ indent: Int?) {
        guard let indent else { return }
        out.append(0x0a)
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * 2))
    }

    private static func writeDecimal(_ value: Int, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        writeDigits(value.magnitude, to: &out)
    }

    private static func writeDigits(_ value: UInt, to out: inout [UInt8]) {
        if value >= 10 { writeDigits(value / 10, to: &out) }
        out.append(UInt8(ascii: "0") + UInt8(value % 10))
    }

    private static func writeString(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        let utf8 = value.utf8
        // Most strings (ids, hashes, titles) need no escape: copy them whole.
        if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out.append(contentsOf: utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5c, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5c, 0x5c])
            case 0x0a: out.append(contentsOf: [0x5c, UInt8(ascii: "n")])
            case 0x0d: out.append(contentsOf: [0x5c, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5c, UInt8(ascii: "t")])
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: "\\u00".utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xf)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
