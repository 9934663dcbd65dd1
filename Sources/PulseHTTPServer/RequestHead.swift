import CMicroHTTPD
import Foundation

/// A request's line and headers as checked before anything is answered, with the headers a responder asked
/// for. libmicrohttpd 0.9.75 is lenient (it takes the first of two Content-Length headers, a name with a space
/// before the colon, a NUL in a value, an HTTP/1.1 request without Host, …), which opens request smuggling
/// behind a proxy that reads the same bytes differently. It does not expose the raw input, but it parses in
/// place: the request line and the header lines stay where they arrived, with CR, LF, the space after the
/// method and the colon overwritten by NUL bytes, and each header it records points into that buffer. So the
/// head is checked by walking its own list of headers against the buffer: every line must start exactly where
/// the previous one ended with CRLF, which nothing but a well-formed line does (a NUL cuts a string short and
/// shifts the next line; an obs-fold makes libmicrohttpd copy the value elsewhere). RFC 9112 rules on top:
/// token characters in the method and header names, visible ASCII in the target, no control characters in
/// values, exactly one Host in HTTP/1.1, at most one Content-Length, Transfer-Encoding only as `chunked` and
/// never together with Content-Length.
struct RequestHead {
    /// Why the request is refused (the access log's note), nil when it is fine.
    var problem: String?
    var headers = HTTPRequestHeaders()
    var contentLength: Int?
    var chunked = false
    /// Header lines in the request.
    var headerCount = 0

    /// True when a body follows the head.
    var hasBody: Bool { chunked || (contentLength ?? 0) > 0 }

    /// Checks the head of the request on `connection` (called once its headers are in). `method`, `target`
    /// (the URI as libmicrohttpd passed it to the URI log callback, before it decoded anything) and `version` are
    /// the pointers libmicrohttpd passes to the access handler; `targetLength` is how long the URI was then.
    static func check(
        _ connection: OpaquePointer, headerSize: Int, method: UnsafePointer<CChar>, target: UnsafePointer<CChar>,
        targetLength: Int, version: UnsafePointer<CChar>, targetBytes: [UInt8], wanted: [WantedHeader]
    ) -> RequestHead {
        var head = RequestHead()
        let base = UnsafeRawPointer(method)
        let end = base + headerSize
        // The request line: METHOD SP target SP HTTP/x.y CRLF, nothing more (NUL bytes and extra spaces move
        // the pointers libmicrohttpd found).
        let methodLength = strlen(method)
        guard methodLength > 0, isToken(UnsafeRawPointer(method), methodLength) else { return head.refused("method") }
        guard UnsafeRawPointer(target) == base + methodLength + 1 else { return head.refused("request-line") }
        guard !targetBytes.isEmpty, targetBytes.count == targetLength,
              targetBytes.withUnsafeBytes({ ByteClass.isVisibleASCII($0.baseAddress!, $0.count) }) else {
            return head.refused("target")
        }
        guard UnsafeRawPointer(version) == UnsafeRawPointer(target) + targetLength + 1 else { return head.refused("target") }
        let lineEnd = UnsafeRawPointer(version) + 8
        guard lineEnd + 2 <= end, lineEnd.load(as: UInt8.self) == 0, (lineEnd + 1).load(as: UInt8.self) == 0 else {
            return head.refused("line-ending")
        }

        var scan = HeaderScan(expected: lineEnd + 2, end: end, wanted: wanted)
        withUnsafeMutablePointer(to: &scan) { pointer in
            _ = MHD_get_connection_values_n(connection, .HEADER_KIND, headerLine, pointer)
        }
        head.headers = scan.headers
        head.headerCount = scan.count
        head.contentLength = scan.contentLength
        head.chunked = scan.chunked
        if let problem = scan.problem { return head.refused(problem) }
        // After the last header line: the empty line, then the end of the head.
        guard scan.expected + 2 == end, scan.expected.load(as: UInt8.self) == 0, (scan.expected + 1).load(as: UInt8.self) == 0 else {
            return head.refused("line-ending")
        }
        let isHTTP10 = strcmp(version, "HTTP/1.0") == 0
        if !isHTTP10 && scan.hosts != 1 { return head.refused(scan.hosts == 0 ? "no-host" : "two-hosts") }
        if isHTTP10 && scan.hosts > 1 { return head.refused("two-hosts") }
        if scan.transferEncodings > 0 && (scan.contentLengths > 0 || isHTTP10) { return head.refused("te-and-cl") }
        return head
    }

    private func refused(_ reason: String) -> RequestHead {
        var copy = self
        copy.problem = "bad-request:" + reason
        return copy
    }

    /// RFC 9110 tchar: `!#$%&'*+-.^_`|~`, digits and letters.
    @inline(__always)
    static func isTokenByte(_ byte: UInt8) -> Bool {
        byte < 128 && (byte < 64 ? tokenLow >> UInt64(byte) & 1 == 1 : tokenHigh >> UInt64(byte - 64) & 1 == 1)
    }

    /// Bit n set for the token bytes n below 64: `!#$%&'*+-.` and the digits.
    private static let tokenLow: UInt64 = 0x03ff_6cfa_0000_0000
    /// Bit n set for the token bytes 64 + n: the letters and `^_`|~`.
    private static let tokenHigh: UInt64 = 0x57ff_ffff_c7ff_fffe

    static func isToken(_ bytes: UnsafeRawPointer, _ count: Int) -> Bool {
        for index in 0..<count where !isTokenByte(bytes.load(fromByteOffset: index, as: UInt8.self)) { return false }
        return true
    }
}

/// A request header the responder wants, by its lowercase name (as bytes, for matching, and as the `String`
/// the responder looks it up by).
struct WantedHeader: Sendable {
    let name: String
    let bytes: [UInt8]

    init(_ name: String) {
        self.name = name.lowercased()
        bytes = Array(self.name.utf8)
    }
}

/// State of the walk over the header lines, shared with the C iterator.
private struct HeaderScan {
    /// Where the next header line must start: right after the previous line's CRLF.
    var expected: UnsafeRawPointer
    let end: UnsafeRawPointer
    let wanted: [WantedHeader]
    var headers = HTTPRequestHeaders()
    var problem: String?
    var count = 0
    var hosts = 0
    var contentLengths = 0
    var contentLength: Int?
    var transferEncodings = 0
    var chunked = false

    init(expected: UnsafeRawPointer, end: UnsafeRawPointer, wanted: [WantedHeader]) {
        self.expected = expected
        self.end = end
        self.wanted = wanted
    }

    /// One header line; false stops the walk.
    mutating func add(key: UnsafeRawPointer, keySize: Int, value: UnsafeRawPointer, valueSize: Int) -> Bool {
        count += 1
        guard key == expected else { return fail("header-line") }
        guard keySize > 0, RequestHead.isToken(key, keySize) else { return fail("header-name") }
        // name NUL(colon) [SP/HTAB]* value NUL(CR) NUL(LF)
        guard value >= key + keySize + 1, value + valueSize + 2 <= end, key.load(fromByteOffset: keySize, as: UInt8.self) == 0 else {
            return fail("header-line")
        }
        var gap = key + keySize + 1
        while gap < value {
            let byte = gap.load(as: UInt8.self)
            guard byte == 0x20 || byte == 0x09 else { return fail("header-line") }
            gap += 1
        }
        guard ByteClass.isFieldValue(value, valueSize) else { return fail("header-value") }
        guard value.load(fromByteOffset: valueSize, as: UInt8.self) == 0, value.load(fromByteOffset: valueSize + 1, as: UInt8.self) == 0 else {
            return fail("header-value")
        }
        expected = value + valueSize + 2
        var trimmed = valueSize
        while trimmed > 0, value.load(fromByteOffset: trimmed - 1, as: UInt8.self) == 0x20 || value.load(fromByteOffset: trimmed - 1, as: UInt8.self) == 0x09 {
            trimmed -= 1
        }
        switch keySize {
        case 4 where Self.named(key, "host"):
            hosts += 1
        case 14 where Self.named(key, "content-length"):
            contentLengths += 1
            guard contentLengths == 1, let length = Self.decimal(value, trimmed) else { return fail("content-length") }
            contentLength = length
        case 17 where Self.named(key, "transfer-encoding"):
            transferEncodings += 1
            guard transferEncodings == 1, trimmed == 7, Self.named(value, "chunked") else { return fail("transfer-encoding") }
            chunked = true
        default:
            break
        }
        for index in wanted.indices where wanted[index].bytes.count == keySize {
            guard wanted[index].bytes.withUnsafeBytes({ Self.named(key, $0) }) else { continue }
            headers.append(lowercaseName: wanted[index].name, [UInt8](UnsafeRawBufferPointer(start: value, count: trimmed)))
        }
        return true
    }

    private mutating func fail(_ reason: String) -> Bool {
        problem = reason
        return false
    }

    /// Case-insensitive comparison with a lowercase ASCII `name` of the same length: bytes fold with `| 0x20`,
    /// which maps only the upper-case letters onto others among the bytes that can occur (token bytes here).
    @inline(__always)
    private static func named(_ bytes: UnsafeRawPointer, _ name: UnsafeRawBufferPointer) -> Bool {
        for index in 0..<name.count where bytes.load(fromByteOffset: index, as: UInt8.self) | 0x20 != name[index] { return false }
        return true
    }

    @inline(__always)
    private static func named(_ bytes: UnsafeRawPointer, _ name: StaticString) -> Bool {
        named(bytes, UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
    }

    /// 1 to 18 decimal digits; nil otherwise.
    private static func decimal(_ bytes: UnsafeRawPointer, _ count: Int) -> Int? {
        guard count > 0, count <= 18 else { return nil }
        var value = 0
        for index in 0..<count {
            let byte = bytes.load(fromByteOffset: index, as: UInt8.self)
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }
}

/// The C iterator over libmicrohttpd's header list; `cls` is the `HeaderScan`.
private let headerLine: MHD_KeyValueIteratorN = { cls, _, key, keySize, value, valueSize in
    guard let cls, let key, let value else { return .NO }
    let scan = cls.assumingMemoryBound(to: HeaderScan.self)
    return scan.pointee.add(key: UnsafeRawPointer(key), keySize: keySize, value: UnsafeRawPointer(value), valueSize: valueSize) ? .YES : .NO
}
