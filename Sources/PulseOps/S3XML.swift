import Foundation
import PulseCore

/// The `<Error><Code>…</Code><Message>…</Message></Error>` body of a failed S3 request. Lenient on
/// purpose: it only decorates an error that is already an error.
struct S3ErrorBody {
    var code: String?
    var message: String?

    init(_ data: Data) {
        guard let root = try? S3XML.parse(data) else { return }
        code = root.child("Code")?.text
        message = root.child("Message")?.text
    }
}

/// One page of a ListObjectsV2 response, read strictly: a listing gc deletes from must be complete, so
/// anything short of a whole, well-formed `ListBucketResult` is an error, never a shorter list. A body
/// cut anywhere (even with a matching Content-Length), an empty 200, `IsTruncated` missing or true
/// without a continuation token, a `KeyCount` that does not match, an entry without a key, a size or a
/// time: each throws `S3XML.Malformed`.
struct S3ListPage {
    var objects: [TargetObject] = []
    var isTruncated = false
    var nextToken: String?

    init(_ data: Data) throws {
        let root = try S3XML.parse(data)
        guard root.name == "ListBucketResult" else { throw S3XML.Malformed("the root element is <\(root.name)>, not <ListBucketResult>") }
        switch root.child("IsTruncated")?.text {
        case "true": isTruncated = true
        case "false": isTruncated = false
        case let other?: throw S3XML.Malformed("IsTruncated is \"\(other)\"")
        case nil: throw S3XML.Malformed("no IsTruncated: cannot tell whether the listing is complete")
        }
        if isTruncated {
            guard let token = root.child("NextContinuationToken")?.text, !token.isEmpty else {
                throw S3XML.Malformed("IsTruncated without a NextContinuationToken: the rest of the listing cannot be fetched")
            }
            nextToken = token
        }
        let contents = root.children.filter { $0.name == "Contents" }
        for entry in contents {
            guard let key = entry.child("Key")?.text, !key.isEmpty else { throw S3XML.Malformed("an entry without a Key") }
            guard let sizeText = entry.child("Size")?.text, let size = Int(sizeText), size >= 0 else {
                throw S3XML.Malformed("\(key): no valid Size")
            }
            guard let text = entry.child("LastModified")?.text, let modified = S3XML.date(text) else {
                throw S3XML.Malformed("\(key): no valid LastModified")
            }
            objects.append(TargetObject(path: key, size: size, modified: modified))
        }
        if let countText = root.child("KeyCount")?.text {
            let prefixes = root.children.filter { $0.name == "CommonPrefixes" }.count
            guard Int(countText) == contents.count + prefixes else {
                throw S3XML.Malformed("KeyCount is \(countText) but the page holds \(contents.count + prefixes) entries")
            }
        }
    }
}

/// Just enough XML for S3's answers, strictly: one root element, nested elements and text, the five
/// predefined entities and numeric character references, an optional `<?xml …?>` declaration. Anything
/// else (an unclosed or mismatched tag, text after the root, a cut-off document) is `Malformed`.
enum S3XML {
    struct Malformed: Error, CustomStringConvertible {
        var reason: String
        init(_ reason: String) { self.reason = reason }
        var description: String { reason }
    }

    final class Element {
        let name: String
        var children: [Element] = []
        var text = ""

        init(name: String) { self.name = name }

        func child(_ name: String) -> Element? { children.first { $0.name == name } }

        /// The first element called `name` at any depth, depth first.
        func find(_ name: String) -> Element? {
            for child in children {
                if child.name == name { return child }
                if let found = child.find(name) { return found }
            }
            return nil
        }
    }

    static func parse(_ data: Data) throws -> Element {
        guard !data.isEmpty else { throw Malformed("an empty body") }
        var reader = Reader(bytes: Array(data))
        reader.skipSpace()
        if reader.starts(with: "<?xml") {
            guard reader.skip(past: "?>") else { throw Malformed("an unterminated XML declaration") }
        }
        reader.skipSpace()
        let root = try reader.element()
        reader.skipSpace()
        guard reader.atEnd else { throw Malformed("text after the root element") }
        return root
    }

    private struct Reader {
        let bytes: [UInt8]
        var position = 0

        var atEnd: Bool { position >= bytes.count }

        mutating func skipSpace() {
            while position < bytes.count, [0x20, 0x09, 0x0a, 0x0d].contains(bytes[position]) { position += 1 }
        }

        func starts(with text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard bytes.count - position >= count else { return false }
            return text.withUTF8Buffer { pattern in
                for index in 0..<count where bytes[position + index] != pattern[index] { return false }
                return true
            }
        }

        mutating func skip(past text: StaticString) -> Bool {
            while !atEnd {
                if starts(with: text) { position += text.utf8CodeUnitCount; return true }
                position += 1
            }
            return false
        }

        mutating func name() throws -> String {
            let start = position
            while position < bytes.count, !" \t\r\n/>=".utf8.contains(bytes[position]) { position += 1 }
            guard position > start else { throw Malformed("a tag without a name") }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }

        /// `<name attributes…>content</name>` or `<name/>`, with the reader on its `<`.
        mutating func element() throws -> Element {
            guard !atEnd, bytes[position] == UInt8(ascii: "<") else { throw Malformed(atEnd ? "the document ends early" : "text where an element should start") }
            position += 1
            let element = Element(name: try name())
            // Attributes (only namespaces in S3's answers): skipped up to the end of the tag, quotes respected.
            var quote: UInt8?
            while true {
                guard !atEnd else { throw Malformed("the document ends inside <\(element.name)>") }
                let byte = bytes[position]
                position += 1
                if let open = quote { if byte == open { quote = nil }; continue }
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") { quote = byte; continue }
                if byte == UInt8(ascii: "/") {
                    guard !atEnd, bytes[position] == UInt8(ascii: ">") else { throw Malformed("a broken tag <\(element.name)") }
                    position += 1
                    return element
                }
                if byte == UInt8(ascii: ">") { break }
            }
            // The text after the last child (S3's elements hold either text or children).
            var textStart = position
            while true {
                guard !atEnd else { throw Malformed("the document ends inside <\(element.name)> (cut off?)") }
                guard bytes[position] == UInt8(ascii: "<") else {
                    position += 1
                    continue
                }
                if starts(with: "</") {
                    let text = bytes[textStart..<position]
                    position += 2
                    let closing = try name()
                    skipSpace()
                    guard closing == element.name, !atEnd, bytes[position] == UInt8(ascii: ">") else {
                        throw Malformed("</\(closing)> closes <\(element.name)>")
                    }
                    position += 1
                    element.text = try Self.decode(text)
                    return element
                }
                if starts(with: "<!--") {
                    guard skip(past: "-->") else { throw Malformed("an unterminated comment") }
                    textStart = position
                    continue
                }
                element.children.append(try self.element())
                textStart = position
            }
        }

        static func decode(_ raw: ArraySlice<UInt8>) throws -> String {
            let text = String(decoding: raw, as: UTF8.self)
            guard text.contains("&") else { return text }
            var out = ""
            var rest = text[...]
            while let amp = rest.firstIndex(of: "&") {
                out += rest[..<amp]
                guard let semicolon = rest[amp...].firstIndex(of: ";") else { throw Malformed("an unterminated entity") }
                let entity = rest[rest.index(after: amp)..<semicolon]
                switch entity {
                case "lt": out += "<"
                case "gt": out += ">"
                case "amp": out += "&"
                case "quot": out += "\""
                case "apos": out += "'"
                default:
                    let number: UInt32? = entity.hasPrefix("#x") ? UInt32(entity.dropFirst(2), radix: 16)
                        : entity.hasPrefix("#") ? UInt32(entity.dropFirst()) : nil
                    guard let number, let scalar = Unicode.Scalar(number) else { throw Malformed("an unknown entity &\(entity);") }
                    out.unicodeScalars.append(scalar)
                }
                rest = rest[rest.index(after: semicolon)...]
            }
            return out + rest
        }
    }

    /// S3's `2026-12-01T15:40:48.000Z`: the common form without a formatter (a page holds a thousand).
    static func date(_ text: String) -> Date? {
        if text.utf8.count == 24, text.hasSuffix("Z"), let dot = text.firstIndex(of: "."),
           let whole = Timestamp.date(String(text[..<dot]) + "Z"), let fraction = Double("0" + text[dot...].dropLast()) {
            return whole.addingTimeInterval(fraction)
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }

    /// An HTTP date (`Tue, 01 Dec 2026 15:40:48 GMT`, RFC 9110's IMF-fixdate), as in `Date` and `Last-Modified`.
    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}
