import PulseCrypto
import PulseHTTPServer

extension Origin {
    /// GET/HEAD /api/sync/appconfig?org=<slug>: the org's white-label config, 304 on a matching If-None-Match.
    func appconfig(query: ArraySlice<UInt8>, _ request: HTTPRequest) -> HTTPResponse {
        guard let slug = Self.queryValue("org", in: query) else { return HTTPResponse(badRequest, note: "-") }
        switch appConfigs.lookup(slug) {
        case let .config(config):
            if let condition = request.headers["if-none-match"], IfNoneMatch.matches(condition, tag: config.tag) {
                return HTTPResponse(config.notModified, note: "appconfig")
            }
            return HTTPResponse(config.ok, note: "appconfig")
        case .unknown:
            return HTTPResponse(notFound, note: "miss")
        case .unavailable:
            return headers.uncacheable(503, "service unavailable\n")
        }
    }

    /// The first value of `name` in an `a=1&b=2` query, percent-decoded; nil if absent or badly escaped.
    static func queryValue(_ name: String, in query: ArraySlice<UInt8>) -> String? {
        let key = Array(name.utf8)
        for pair in query.split(separator: 0x26, omittingEmptySubsequences: true) {
            let parts = pair.split(separator: 0x3d, maxSplits: 1, omittingEmptySubsequences: false)
            guard isPlain(parts[0]) ? parts[0].elementsEqual(key) : percentDecode(parts[0]) == name else { continue }
            guard parts.count > 1 else { return "" }
            // The usual value (`org=acme`) needs no decoding: one String straight from the bytes.
            return isPlain(parts[1]) ? String(decoding: parts[1], as: UTF8.self) : percentDecode(parts[1])
        }
        return nil
    }

    /// No `%` or `+` and nothing beyond ASCII: the bytes are the text.
    private static func isPlain(_ bytes: ArraySlice<UInt8>) -> Bool {
        !bytes.contains { $0 == 0x25 || $0 == 0x2b || $0 >= 0x80 }
    }

    private static func percentDecode(_ bytes: ArraySlice<UInt8>) -> String? {
        var out: [UInt8] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == 0x25 {
                guard index + 2 < bytes.endIndex + 0, index + 2 <= bytes.endIndex - 1,
                      let high = Hex.value(bytes[index + 1]), let low = Hex.value(bytes[index + 2]) else { return nil }
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(byte == 0x2b ? 0x20 : byte)
                index += 1
            }
        }
        return String(validating: out, as: UTF8.self)
    }
}
