import Foundation

/// The one JSON parser of the tools: strict RFC 8259 over bytes, with the line and column of the first
/// problem (`3:14: missing ',' between fields`).
///
/// Beyond the grammar it refuses what a lenient parser lets through and an organizer would not mean:
/// duplicate field names (naming both places), invalid UTF-8, a byte order mark, lone UTF-16 surrogates
/// in `\u` escapes, raw control characters in strings, numbers that do not fit a double, and nesting
/// deeper than `JSONValue.maxNesting`. Integers without fraction or exponent that fit `Int` become
/// `.int`; every other number is `.double`.
struct JSONParser {
    private let bytes: [UInt8]
    private var offset = 0
    private var depth = 0
    /// The last ',' seen: where a trailing comma is reported.
    private var lastComma = 0

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    static func parse(_ bytes: [UInt8]) throws(JSONValue.SyntaxError) -> JSONValue {
        var parser = JSONParser(bytes)
        do {
            return try parser.document()
        } catch {
            throw JSONValue.SyntaxError(bytes: bytes, offset: error.offset, message: error.message)
        }
    }

    /// A problem at a byte offset; turned into line and column once, when it is thrown out.
    struct Failure: Error {
        var offset: Int
        var message: String
    }

    private func fail(_ message: String, at offset: Int? = nil) -> Failure {
        Failure(offset: offset ?? self.offset, message: message)
    }

    // MARK: - Structure

    private mutating func document() throws(Failure) -> JSONValue {
        if bytes.starts(with: [0xef, 0xbb, 0xbf]) {
            throw fail("the file starts with a byte order mark (BOM): save it as UTF-8 without BOM")
        }
        skipSpace()
        guard offset < bytes.count else { throw fail(bytes.isEmpty ? "empty file: expected a JSON value" : "no JSON value, only white space") }
        let value = try self.value()
        skipSpace()
        if offset < bytes.count {
            throw fail(startsComment ? "comments are not allowed in JSON" : "\(found) after the end of the JSON value")
        }
        return value
    }

    private mutating func value() throws(Failure) -> JSONValue {
        guard offset < bytes.count else { throw fail("unexpected end of file: expected a value") }
        switch bytes[offset] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"): return try literal()
        case UInt8(ascii: "'"): throw fail("strings and field names use double quotes, found '")
        case UInt8(ascii: "/") where startsComment: throw fail("comments are not allowed in JSON")
        case UInt8(ascii: "+"): throw fail("a number cannot start with '+'")
        case UInt8(ascii: "."): throw fail("a number needs a digit before '.'")
        case UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: ","): throw fail("expected a value, found \(found)")
        default:
            if isWordByte(bytes[offset]) {
                let start = offset
                throw fail("unknown word \(word()) (JSON has true, false and null; strings need double quotes)", at: start)
            }
            throw fail("expected a value, found \(found)")
        }
    }

    private mutating func enter() throws(Failure) {
        depth += 1
        if depth > JSONValue.maxNesting { throw fail("nested deeper than \(JSONValue.maxNesting) arrays and objects") }
    }

    private mutating func object() throws(Failure) -> JSONValue {
        let start = offset
        try enter()
        offset += 1
        var fields: [String: JSONValue] = [:]
        skipSpace()
        if peek(UInt8(ascii: "}")) {
            offset += 1
            depth -= 1
            return .object(fields)
        }
        while true {
            guard offset < bytes.count else { throw fail("unexpected end of file: the object opened at \(position(start)) is not closed") }
            guard bytes[offset] == UInt8(ascii: "\"") else {
                if bytes[offset] == UInt8(ascii: "}") { throw fail("trailing comma before '}'", at: lastComma) }
                if bytes[offset] == UInt8(ascii: "'") { throw fail("field names use double quotes, found '") }
                if startsComment { throw fail("comments are not allowed in JSON") }
                if isWordByte(bytes[offset]) {
                    let start = offset
                    throw fail("field name \(word()) needs double quotes", at: start)
                }
                throw fail("expected a field name in double quotes, found \(found)")
            }
            let keyOffset = offset
            let key = try string()
            skipSpace()
            guard peek(UInt8(ascii: ":")) else {
                throw fail(offset < bytes.count ? "expected ':' after field name \"\(key)\", found \(found)" : "unexpected end of file: expected ':'")
            }
            offset += 1
            skipSpace()
            let value = try self.value()
            if fields.updateValue(value, forKey: key) != nil {
                let first = firstKeyOffset(key, inObjectAt: start)
                throw fail("duplicate field \"\(key)\" (first at \(position(first)))", at: keyOffset)
            }
            skipSpace()
            guard offset < bytes.count else { throw fail("unexpected end of file: the object opened at \(position(start)) is not closed") }
            switch bytes[offset] {
            case UInt8(ascii: ","):
                lastComma = offset
                offset += 1
                skipSpace()
            case UInt8(ascii: "}"):
                offset += 1
                depth -= 1
                return .object(fields)
            case UInt8(ascii: "\""): throw fail("missing ',' between fields")
            default:
                throw fail(startsComment ? "comments are not allowed in JSON" : "expected ',' or '}' after a field, found \(found)")
            }
        }
    }

    private mutating func array() throws(Failure) -> JSONValue {
        let start = offset
        try enter()
        offset += 1
        var items: [JSONValue] = []
        skipSpace()
        if peek(UInt8(ascii: "]")) {
            offset += 1
            depth -= 1
            return .array(items)
        }
        while true {
            guard offset < bytes.count else { throw fail("unexpected end of file: the array opened at \(position(start)) is not closed") }
            if bytes[offset] == UInt8(ascii: "]") { throw fail("trailing comma before ']'", at: lastComma) }
            items.append(try value())
            skipSpace()
            guard offset < bytes.count else { throw fail("unexpected end of file: the array opened at \(position(start)) is not closed") }
            switch bytes[offset] {
            case UInt8(ascii: ","):
                lastComma = offset
                offset += 1
                skipSpace()
            case UInt8(ascii: "]"):
                offset += 1
                depth -= 1
                return .array(items)
            case UInt8(ascii: "\""), UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                throw fail("missing ',' between array items")
            default:
                throw fail(startsComment ? "comments are not allowed in JSON" : "expected ',' or ']' after an array item, found \(found)")
            }
        }
    }

    /// Where the first `key` of the object starting at `start` is: parsed again only to report a duplicate.
    private func firstKeyOffset(_ key: String, inObjectAt start: Int) -> Int {
        var again = JSONParser(bytes)
        again.offset = start + 1
        while true {
            again.skipSpace()
            let at = again.offset
            guard let name = try? again.string() else { return start }
            if name == key { return at }
            again.skipSpace()
            again.offset += 1  // ':'
            again.skipSpace()
            guard (try? again.value()) != nil else { return start }
            again.skipSpace()
            again.offset += 1  // ','
        }
    }

    // MARK: - Scalars

    private mutating func literal() throws(Failure) -> JSONValue {
        let start = offset
        let text = word()
        switch text {
        case "'true'": return .bool(true)
        case "'false'": return .bool(false)
        case "'null'": return .null
        default:
            offset = start
            throw fail("unknown word \(text) (JSON has true, false and null; strings need double quotes)")
        }
    }

    /// The run of letters, digits and `_` at the offset (consumed), quoted for a message.
    private mutating func word() -> String {
        let start = offset
        while offset < bytes.count, isWordByte(bytes[offset]), offset - start < 40 { offset += 1 }
        return "'" + String(decoding: bytes[start..<offset], as: UTF8.self) + "'"
    }

    private func isWordByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"): true
        default: false
        }
    }

    private mutating func number() throws(Failure) -> JSONValue {
        let start = offset
        var negative = false
        if bytes[offset] == UInt8(ascii: "-") {
            negative = true
            offset += 1
            guard offset < bytes.count, isDigit(bytes[offset]) else {
                if offset < bytes.count, isWordByte(bytes[offset]) { throw fail("unknown word '-\(word().dropFirst())", at: start) }
                throw fail("a '-' must be followed by a digit")
            }
        }
        var integer = true
        if bytes[offset] == UInt8(ascii: "0") {
            offset += 1
            if offset < bytes.count, isDigit(bytes[offset]) { throw fail("numbers cannot have a leading zero", at: offset - 1) }
        } else {
            while offset < bytes.count, isDigit(bytes[offset]) { offset += 1 }
        }
        if peek(UInt8(ascii: ".")) {
            integer = false
            offset += 1
            guard offset < bytes.count, isDigit(bytes[offset]) else { throw fail("a digit must follow the '.' of a number") }
            while offset < bytes.count, isDigit(bytes[offset]) { offset += 1 }
        }
        if offset < bytes.count, bytes[offset] | 0x20 == UInt8(ascii: "e") {
            integer = false
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            guard offset < bytes.count, isDigit(bytes[offset]) else { throw fail("a digit must follow the exponent of a number") }
            while offset < bytes.count, isDigit(bytes[offset]) { offset += 1 }
        }
        if offset < bytes.count, isWordByte(bytes[offset]) || bytes[offset] == UInt8(ascii: ".") {
            throw fail("\(found) in a number")
        }
        if integer {
            // Accumulate negatively so that Int.min fits; past Int's range the number is a double.
            var value = 0
            var overflow = false
            for byte in bytes[(negative ? start + 1 : start)..<offset] {
                let (times, o1) = value.multipliedReportingOverflow(by: 10)
                let (next, o2) = times.subtractingReportingOverflow(Int(byte - UInt8(ascii: "0")))
                if o1 || o2 { overflow = true; break }
                value = next
            }
            if !overflow {
                if negative { return .int(value) }
                if value != Int.min { return .int(-value) }
            }
        }
        guard let double = Double(String(decoding: bytes[start..<offset], as: UTF8.self)), double.isFinite else {
            throw fail("number out of range", at: start)
        }
        return .double(double)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    /// A string at the offset (on its opening quote), escapes decoded and UTF-8 checked.
    private mutating func string() throws(Failure) -> String {
        let open = offset
        offset += 1
        let start = offset
        // Fast path: plain ASCII up to the closing quote, no escape.
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                offset += 1
                return String(decoding: bytes[start..<offset - 1], as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { break }
            offset += 1
        }
        var out = Array(bytes[start..<offset])
        while offset < bytes.count {
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\""):
                offset += 1
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try escape(into: &out)
            case 0x00..<0x20:
                throw fail(Self.controlMessage(byte))
            case 0x80...:
                let length = try utf8Sequence()
                out.append(contentsOf: bytes[offset..<offset + length])
                offset += length
            default:
                out.append(byte)
                offset += 1
            }
        }
        throw fail("unexpected end of file: the string opened at \(position(open)) is not closed")
    }

    private static func controlMessage(_ byte: UInt8) -> String {
        switch byte {
        case 0x09: "raw tab in a string (write \\t)"
        case 0x0a, 0x0d: "line break in a string (the string is not closed on its line, or write \\n)"
        default: "control character U+\(hex4(UInt16(byte))) in a string (write \\u\(hex4(UInt16(byte))))"
        }
    }

    private mutating func escape(into out: inout [UInt8]) throws(Failure) {
        let start = offset
        offset += 1
        guard offset < bytes.count else { throw fail("unexpected end of file in an escape") }
        let letter = bytes[offset]
        offset += 1
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(letter)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0c)
        case UInt8(ascii: "n"): out.append(0x0a)
        case UInt8(ascii: "r"): out.append(0x0d)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = UInt32(try hexQuad(at: start))
            if (0xdc00...0xdfff).contains(scalar) {
                throw fail("lone low surrogate \\u\(Self.hex4(UInt16(scalar))) (a UTF-16 pair starts with \\uD800-\\uDBFF)", at: start)
            }
            if (0xd800...0xdbff).contains(scalar) {
                guard offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u") else {
                    throw fail("lone high surrogate \\u\(Self.hex4(UInt16(scalar))) (not followed by a \\uDC00-\\uDFFF)", at: start)
                }
                let low = UInt32(try hexQuad(at: offset, skip: 2))
                guard (0xdc00...0xdfff).contains(low) else {
                    throw fail("lone high surrogate \\u\(Self.hex4(UInt16(scalar))) (followed by \\u\(Self.hex4(UInt16(low))))", at: start)
                }
                scalar = 0x10000 + ((scalar - 0xd800) << 10) + (low - 0xdc00)
            }
            out.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
        default:
            offset = start
            let shown = letter >= 0x20 && letter < 0x7f ? "\\\(Character(Unicode.Scalar(letter)))" : "\\ followed by byte 0x\(String(letter, radix: 16))"
            throw fail("invalid escape \(shown) (JSON knows \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)")
        }
    }

    /// The four hex digits after `\u` (the offset is after `u`, or `skip` bytes before it).
    private mutating func hexQuad(at escapeStart: Int, skip: Int = 0) throws(Failure) -> UInt16 {
        offset += skip
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard offset < bytes.count, let digit = Self.hexValue(bytes[offset]) else {
                throw fail("\\u must be followed by four hex digits", at: escapeStart)
            }
            value = value << 4 | UInt16(digit)
            offset += 1
        }
        return value
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    static func hex4(_ value: UInt16) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: 4 - text.count) + text
    }

    /// The length of the well-formed UTF-8 sequence at the offset (Unicode Table 3-7: no overlong forms,
    /// no surrogates, nothing past U+10FFFF).
    private func utf8Sequence() throws(Failure) -> Int {
        guard let (_, length) = UTF8Scalar.decode(bytes, at: offset) else { throw invalidUTF8(at: offset) }
        return length
    }

    private func invalidUTF8(at offset: Int) -> Failure {
        let shown = bytes[offset..<Swift.min(offset + 4, bytes.count)].map { String(format: "%02X", $0) }.joined(separator: " ")
        return fail("invalid UTF-8 (bytes \(shown)): save the file as UTF-8", at: offset)
    }

    // MARK: - Helpers

    private mutating func skipSpace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x0a, 0x0d, 0x09: offset += 1
            default: return
            }
        }
    }

    private func peek(_ byte: UInt8) -> Bool { offset < bytes.count && bytes[offset] == byte }

    private var startsComment: Bool {
        offset + 1 < bytes.count && bytes[offset] == UInt8(ascii: "/") && (bytes[offset + 1] == UInt8(ascii: "/") || bytes[offset + 1] == UInt8(ascii: "*"))
    }

    /// The byte at the offset as a message shows it: `'x'`, `U+00E9`, or `end of file`.
    private var found: String {
        guard offset < bytes.count else { return "end of file" }
        let byte = bytes[offset]
        if byte >= 0x21 && byte < 0x7f { return "'\(Character(Unicode.Scalar(byte)))'" }
        if byte < 0x80 { return "U+\(Self.hex4(UInt16(byte)))" }
        if let length = try? utf8Sequence(), let scalar = String(decoding: bytes[offset..<offset + length], as: UTF8.self).unicodeScalars.first {
            return "'\(scalar)' (U+\(String(scalar.value, radix: 16, uppercase: true)))"
        }
        return "byte 0x\(String(format: "%02X", byte)) (not UTF-8)"
    }

    private func position(_ offset: Int) -> String {
        let (line, column) = JSONValue.SyntaxError.lineAndColumn(bytes, offset)
        return "line \(line), column \(column)"
    }
}
