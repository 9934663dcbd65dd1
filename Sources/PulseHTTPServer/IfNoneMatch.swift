/// `If-None-Match` against one entity-tag, on the header's bytes (RFC 9110 §13.1.2), for both servers
/// (pulse-origin's assets and app configs, pulse-server's manifests): no `String` work on the hot path.
///
/// - A list of entity-tags separated by commas and optional whitespace; weak comparison: `W/"x"` matches `"x"`.
/// - `*` matches any current representation.
/// - Anything else (a tag without quotes, an unterminated quote, a header longer than `maxBytes`) matches
///   nothing from where it starts: the full answer is sent, which is always safe.
public enum IfNoneMatch {
    /// Longer headers never match (a client has no reason to send more than a few tags).
    public static let maxBytes = 8192

    private static let quote: UInt8 = 0x22, comma: UInt8 = 0x2c, space: UInt8 = 0x20, tab: UInt8 = 0x09
    private static let star: UInt8 = 0x2a, slash: UInt8 = 0x2f, weak: UInt8 = 0x57  // W

    /// True when the list `header` names the entity-tag whose opaque part is `tag` (without quotes), or is `*`.
    public static func matches(_ header: [UInt8], tag: [UInt8]) -> Bool {
        let end = header.count
        guard end <= maxBytes else { return false }
        var index = 0
        while index < end {
            let byte = header[index]
            if byte == space || byte == tab || byte == comma { index += 1; continue }
            if byte == star { return true }
            if byte == weak, index + 1 < end, header[index + 1] == slash { index += 2 }
            guard index < end, header[index] == quote else { return false }
            let open = index + 1
            var close = open
            while close < end, header[close] != quote { close += 1 }
            guard close < end else { return false }
            if Bytes.equal(header[open..<close], tag) { return true }
            index = close + 1
        }
        return false
    }
}
