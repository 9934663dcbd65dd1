/// `application/x-www-form-urlencoded` values and query parameters: the one percent-decoder of the staff API's
/// queries and the console's forms, and the encoder of the values the console puts in its links.
public enum FormDecoding {
    /// `text` as a query value: every byte but `A–Z a–z 0–9 - . _ ~` as `%XX`, so `value` gives it back.
    public static func encoded(_ text: String) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `%XX` decoded and `+` as a space; nil on a bad escape, text that is not UTF-8, or more than `limit`
    /// decoded bytes.
    public static func value(_ raw: ArraySlice<UInt8>, limit: Int = .max) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(min(raw.count, limit))
        var index = raw.startIndex
        while index < raw.endIndex {
            let byte = raw[index]
            if byte == UInt8(ascii: "%") {
                guard raw.endIndex - index >= 3, let high = hexValue(raw[index + 1]), let low = hexValue(raw[index + 2]) else { return nil }
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(byte == UInt8(ascii: "+") ? 0x20 : byte)
                index += 1
            }
            guard out.count <= limit else { return nil }
        }
        return String(validating: out, as: UTF8.self)
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
