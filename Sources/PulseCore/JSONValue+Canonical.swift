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

    private func write(to out: inout [UInt8], indent: Int?) {
        switch self {
        case .null: out += Array("null".utf8)
        case let .bool(value): out += Array((value ? "true" : "false").utf8)
        case let .int(value): out += Array(String(value).utf8)
        case let .double(value):
            // Manifests hold integers only; a double prints in Swift's shortest round-trip form.
            out += Array((value.rounded() == value && abs(value) < 1e15 ? String(Int(value)) : String(value)).utf8)
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
            let keys = fields.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (index, key) in keys.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.newline(&out, indent.map { $0 + 1 })
                Self.writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                if indent != nil { out.append(UInt8(ascii: " ")) }
                fields[key]!.write(to: &out, indent: indent.map { $0 + 1 })
            }
            if !keys.isEmpty { Self.newline(&out, indent) }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func newline(_ out: inout [UInt8], _ indent: Int?) {
        guard let indent else { return }
        out.append(0x0a)
        out += [UInt8](repeating: UInt8(ascii: " "), count: indent * 2)
    }

    private static func writeString(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [0x5c, 0x22]
            case UInt8(ascii: "\\"): out += [0x5c, 0x5c]
            case 0x0a: out += [0x5c, UInt8(ascii: "n")]
            case 0x0d: out += [0x5c, UInt8(ascii: "r")]
            case 0x09: out += [0x5c, UInt8(ascii: "t")]
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xf)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
