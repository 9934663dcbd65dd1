import PulseHTTPServer
/// An `application/x-www-form-urlencoded` body, parsed with bounds: at most 64 fields, names of at most
/// 64 bytes, values of at most 4,096 bytes after decoding; a malformed escape makes the body unreadable
/// (nil), never a crash. A name given twice keeps its first value.
public struct FormFields: Sendable {
    private var fields: [String: String] = [:]

    public init() {}

    /// Parses `body`; nil when it is not a well-formed form body within the bounds.
    public init?(body: [UInt8]?) {
        guard let body, !body.isEmpty else { return }
        guard body.count <= 64 * 1024 else { return nil }
        var count = 0
        for pair in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            count += 1
            guard count <= 64 else { return nil }
            let equals = pair.firstIndex(of: UInt8(ascii: "="))
            let rawName = pair[pair.startIndex..<(equals ?? pair.endIndex)]
            let rawValue = equals.map { pair[pair.index(after: $0)...] } ?? []
            guard let name = Self.decode(rawName, limit: 64), let value = Self.decode(rawValue, limit: 4096) else { return nil }
            if fields[name] == nil { fields[name] = value }
        }
    }

    /// The value of field `name`, nil when absent.
    public subscript(_ name: String) -> String? { fields[name] }

    /// The value with spaces trimmed, nil when absent or empty.
    public func text(_ name: String) -> String? {
        guard let value = fields[name]?.trimmingSpaces, !value.isEmpty else { return nil }
        return value
    }

    /// Percent-decoding with `+` as space; nil on a bad escape, invalid UTF-8 or past `limit` bytes.
    static func decode(_ raw: ArraySlice<UInt8>, limit: Int) -> String? { FormDecoding.value(raw, limit: limit) }
}

extension String {
    var trimmingSpaces: String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" || first == "\n" || first == "\r" { view.removeFirst() }
        while let last = view.last, last == " " || last == "\t" || last == "\n" || last == "\r" { view.removeLast() }
        return String(view)
    }
}
