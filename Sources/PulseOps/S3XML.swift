import Foundation

/// The `<Error><Code>…</Code><Message>…</Message></Error>` body of a failed S3 request.
struct S3ErrorBody {
    var code: String?
    var message: String?

    init(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        code = S3XML.first("Code", in: text[...])
        message = S3XML.first("Message", in: text[...])
    }
}

/// One page of a ListObjectsV2 response.
struct S3ListPage {
    var objects: [TargetObject] = []
    var isTruncated = false
    var nextToken: String?

    init(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        for contents in S3XML.all("Contents", in: text[...]) {
            guard let key = S3XML.first("Key", in: contents) else { continue }
            let size = S3XML.first("Size", in: contents).flatMap(Int.init) ?? 0
            let modified = S3XML.first("LastModified", in: contents).flatMap(S3XML.date) ?? .distantPast
            objects.append(TargetObject(path: key, size: size, modified: modified))
        }
        isTruncated = S3XML.first("IsTruncated", in: text[...]) == "true"
        nextToken = S3XML.first("NextContinuationToken", in: text[...])
    }
}

/// Just enough XML for S3's flat responses: element text by name, entities decoded.
enum S3XML {
    static func all(_ name: String, in text: Substring) -> [Substring] {
        var found: [Substring] = []
        var rest = text
        while let open = rest.range(of: "<\(name)>"), let close = rest[open.upperBound...].range(of: "</\(name)>") {
            found.append(rest[open.upperBound..<close.lowerBound])
            rest = rest[close.upperBound...]
        }
        return found
    }

    static func first(_ name: String, in text: Substring) -> String? {
        guard let open = text.range(of: "<\(name)>"), let close = text[open.upperBound...].range(of: "</\(name)>") else {
            return nil
        }
        return decode(text[open.upperBound..<close.lowerBound])
    }

    static func decode(_ text: Substring) -> String {
        var out = String(text)
        for (entity, character) in [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&apos;", "'"), ("&#39;", "'"), ("&amp;", "&")] {
            out = out.replacingOccurrences(of: entity, with: character)
        }
        return out
    }

    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}
