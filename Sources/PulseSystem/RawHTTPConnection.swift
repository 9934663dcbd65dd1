#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 connection over a plain TCP socket that sends exactly the bytes it is given and reads
/// answers byte for byte: for checks that an ordinary client would get in the way of (a malformed
/// header, a doubled header, two 404s compared to the last byte, a header trick). pulse-conformance uses
/// it for `http://` servers, and the HTTP tests of the server modules for everything on the wire (a source
/// address per connection, whether and when the server closed); no TLS.
///
/// It also reads a body piece by piece as it arrives (`readBody`), blocking in `recv` without spinning, for
/// pulse-device's event stream: FoundationNetworking's URLSession keeps a core busy while a streaming answer
/// is idle. `shutdown()` may be called from another thread to end a blocked read; nothing else may.
///
/// Every socket call and pointer lives here, as the wrappers' rule asks.
// @unchecked: owns a socket used by one thread at a time; only `shutdown()` may come from another (documented).
public final class RawHTTPConnection: @unchecked Sendable {
    /// Why a connection or an exchange failed; the text says what and where.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    // Visible inside the package for the test-only helpers (Tests/PulseSystemTesting), which a release build also compiles.
    package var fd: Int32
    package var pending: [UInt8] = []
    private let host: String
    private let port: Int
    package let peer: String

    /// Connects to `host:port` (a name, an IPv4 or an IPv6 address), with `timeout` seconds for the
    /// connection and for each read and send; from the local address `source` if given (another loopback
    /// address such as 127.0.0.5, for a server's per-client-address rules).
    public init(host: String, port: Int, timeout: Double = 10, source: String? = nil) throws {
        self.host = host
        self.port = port
        peer = "\(host):\(port)"
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        guard resolved == 0, let first = list else {
            throw Failure("cannot resolve \(host): \(String(cString: gai_strerror(resolved)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = Errno(ECONNREFUSED).description
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        var connected: Int32 = -1
        while let entry = candidate, connected < 0 {
            candidate = entry.pointee.ai_next
            let socket = Glibc.socket(entry.pointee.ai_family, entry.pointee.ai_socktype, entry.pointee.ai_protocol)
            guard socket >= 0 else { lastError = Errno.current.description; continue }
            Self.setTimeout(socket, seconds: timeout)
            if let source, let problem = Self.bind(socket, to: source, family: entry.pointee.ai_family) {
                lastError = problem
                Glibc.close(socket)
            } else if Glibc.connect(socket, entry.pointee.ai_addr, entry.pointee.ai_addrlen) == 0 {
                connected = socket
            } else {
                lastError = Errno.current.description
                Glibc.close(socket)
            }
        }
        guard connected >= 0 else { throw Failure("cannot connect to \(peer): \(lastError)") }
        fd = connected
    }

    /// Binds `socket` to the local address `source` (port chosen by the system); the problem, or nil.
    private static func bind(_ socket: Int32, to source: String, family: Int32) -> String? {
        var hints = addrinfo()
        hints.ai_family = family
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICHOST
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(source, "0", &hints, &list)
        guard resolved == 0, let local = list else {
            return "cannot use \(source) as the source address: \(String(cString: gai_strerror(resolved)))"
        }
        defer { freeaddrinfo(list) }
        guard Glibc.bind(socket, local.pointee.ai_addr, local.pointee.ai_addrlen) == 0 else {
            return "cannot bind \(source): \(Errno.current.description)"
        }
        return nil
    }

    deinit { close() }

    /// Closes the connection (idempotent).
    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    private static func setTimeout(_ socket: Int32, seconds: Double) {
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1e6))
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Ends the connection from another thread: a read blocked in `readBody` returns at once.
    public func shutdown() {
        let socket = fd
        if socket >= 0 { Glibc.shutdown(socket, Int32(SHUT_RDWR)) }
    }

    /// Reads the body of the answer whose head `readHead` returned, handing each piece to `piece` as it arrives:
    /// `Content-Length`, chunked, or until the server closes. Nothing for `bodyless`, 1xx, 204 and 304.
    public func readBody(of head: RawHTTPResponse, bodyless: Bool = false, _ piece: ([UInt8]) throws -> Void) throws {
        if bodyless || head.status == 204 || head.status == 304 || head.status < 200 { return }
        if head.header("transfer-encoding")?.lowercased() == "chunked" {
            while try streamChunk(piece) {}
            return
        }
        if let text = head.header("content-length") {
            guard let length = Int(text), length >= 0 else { throw Failure("\(peer) sent Content-Length \"\(text)\"") }
            try hand(length, to: piece)
            return
        }
        while true {
            if !pending.isEmpty {
                try piece(pending)
                pending = []
            }
            guard try receive() else { return }
        }
    }

    /// Sends `bytes` as they are.
    public func send(_ bytes: [UInt8]) throws {
        guard fd >= 0 else { throw Failure("connection to \(peer) is closed") }
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Failure("cannot send to \(peer): \(Errno.current.description)") }
            offset += sent
        }
    }

    /// Sends a request and reads its answer: the request line, `Host` (this connection's host and port), `headers`
    /// in order, `Content-Length` when `body` is not empty, then the body. No answer body is read for a HEAD.
    public func request(_ method: String, _ target: String, _ headers: [(String, String)] = [], body: [UInt8] = []) throws
        -> RawHTTPResponse
    {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: \(host.contains(":") ? "[\(host)]" : host):\(port)\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if !body.isEmpty { text += "Content-Length: \(body.count)\r\n" }
        try send(Array((text + "\r\n").utf8) + body)
        return try readResponse(bodyless: method == "HEAD")
    }

    /// Sends `text` as it is (UTF-8).
    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Reads one response: its head, then a `Content-Length` or chunked body, or (with neither) everything
    /// until the server closes. No body for `bodyless` (a HEAD), 1xx, 204 and 304.
    public func readResponse(bodyless: Bool = false) throws -> RawHTTPResponse {
        var response = try readHead()
        if bodyless || response.status == 204 || response.status == 304 || response.status < 200 { return response }
        if response.header("transfer-encoding")?.lowercased() == "chunked" {
            while let chunk = try readChunk(into: &response.raw) { response.body += chunk }
            return response
        }
        if let text = response.header("content-length") {
            guard let length = Int(text), length >= 0 else { throw Failure("\(peer) sent Content-Length \"\(text)\"") }
            while pending.count < length { try fill() }
            response.body = Array(pending[..<length])
            pending.removeFirst(length)
        } else {
            while (try? receive()) == true {}
            response.body = pending
            pending = []
        }
        response.raw += response.body
        return response
    }

    /// Reads a status line and headers.
    public func readHead() throws -> RawHTTPResponse {
        var end = Self.find([13, 10, 13, 10], in: pending)
        while end == nil {
            try fill()
            end = Self.find([13, 10, 13, 10], in: pending)
        }
        let raw = Array(pending[..<(end! + 4)])
        pending.removeFirst(end! + 4)
        var lines = Self.lines(raw.dropLast(4))
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else {
            throw Failure("\(peer) sent no HTTP status line: \(statusLine.prefix(80))")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            headers.append((line[..<colon].lowercased(), String(value.reversed().drop { $0 == " " || $0 == "\t" }.reversed())))
        }
        return RawHTTPResponse(raw: raw, status: status, headers: headers, body: [])
    }

    /// The next chunk of a chunked body (its framing appended to `raw`); nil after the last one.
    private func readChunk(into raw: inout [UInt8]) throws -> [UInt8]? {
        guard let size = try readChunkSize(into: &raw) else { return nil }
        while pending.count < size + 2 { try fill() }
        let chunk = Array(pending[..<size])
        raw += pending[..<(size + 2)]
        pending.removeFirst(size + 2)
        return chunk
    }

    /// The next chunk of a chunked body handed to `piece` as it arrives (an event may sit in a chunk that is
    /// still arriving); false after the last one.
    private func streamChunk(_ piece: ([UInt8]) throws -> Void) throws -> Bool {
        var framing: [UInt8] = []
        guard let size = try readChunkSize(into: &framing) else { return false }
        try hand(size, to: piece)
        while pending.count < 2 { try fill() }
        pending.removeFirst(2)
        return true
    }

    /// The next `count` bytes handed to `piece` as they arrive.
    private func hand(_ count: Int, to piece: ([UInt8]) throws -> Void) throws {
        var left = count
        while left > 0 {
            if pending.isEmpty { try fill() }
            let take = min(left, pending.count)
            try piece(Array(pending[..<take]))
            pending.removeFirst(take)
            left -= take
        }
    }

    /// A chunk's size line (appended to `raw`); nil for the last chunk, whose trailers are read too.
    private func readChunkSize(into raw: inout [UInt8]) throws -> Int? {
        var lineEnd = Self.find([13, 10], in: pending)
        while lineEnd == nil {
            try fill()
            lineEnd = Self.find([13, 10], in: pending)
        }
        let sizeText = String(decoding: pending[..<lineEnd!], as: UTF8.self).split(separator: ";").first.map(String.init) ?? ""
        guard let size = Int(sizeText.filter { $0 != " " }, radix: 16), size >= 0 else {
            throw Failure("\(peer) sent a bad chunk size \"\(sizeText.prefix(20))\"")
        }
        raw += pending[..<(lineEnd! + 2)]
        pending.removeFirst(lineEnd! + 2)
        guard size == 0 else { return size }
        // Trailers, up to the empty line.
        while true {
            var end = Self.find([13, 10], in: pending)
            while end == nil {
                try fill()
                end = Self.find([13, 10], in: pending)
            }
            raw += pending[..<(end! + 2)]
            pending.removeFirst(end! + 2)
            if end == 0 { return nil }
        }
    }

    /// The next chunk of a chunked body whose head `readHead` returned, as it arrives; nil after the last one.
    public func readChunk() throws -> [UInt8]? {
        var framing: [UInt8] = []
        return try readChunk(into: &framing)
    }

    /// True when the server has closed the connection (a read ends or is reset) within the read timeout; false
    /// when something arrives first (kept for the next read) or nothing does.
    public func isClosedByPeer() -> Bool {
        guard fd >= 0 else { return true }
        if !pending.isEmpty { return false }
        var byte: UInt8 = 0
        let got = recv(fd, &byte, 1, 0)
        if got == 1 { pending.append(byte) }
        return got == 0 || (got < 0 && errno == ECONNRESET)
    }

    /// True when the server closes the connection within the read timeout (after anything it still sends).
    public func closesWithinTimeout() -> Bool {
        guard fd >= 0 else { return true }
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let got = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if got == 0 || (got < 0 && errno == ECONNRESET) { return true }
            if got < 0 { return false }
        }
    }

    /// Reads more; fails when the server has closed the connection.
    private func fill() throws {
        guard try receive() else { throw Failure("\(peer) closed the connection") }
    }

    /// Reads more; false when the server has closed the connection (or `shutdown` ended it).
    private func receive() throws -> Bool {
        guard fd >= 0 else { throw Failure("connection to \(peer) is closed") }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let got = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if got == 0 { return false }
        guard got > 0 else {
            let reason = errno == EAGAIN ? "no data for the read timeout" : Errno.current.description
            throw Failure("cannot read from \(peer): \(reason)")
        }
        pending += chunk[..<got]
        return true
    }

    /// The CRLF-separated lines of a head, as text.
    private static func lines(_ bytes: ArraySlice<UInt8>) -> [String] {
        var lines: [String] = []
        var start = bytes.startIndex
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == 13, index + 1 < bytes.endIndex, bytes[index + 1] == 10 {
                lines.append(String(decoding: bytes[start..<index], as: UTF8.self))
                index += 2
                start = index
            } else {
                index += 1
            }
        }
        lines.append(String(decoding: bytes[start..<bytes.endIndex], as: UTF8.self))
        return lines
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start..<(start + needle.count)].elementsEqual(needle) {
            return start
        }
        return nil
    }
}
