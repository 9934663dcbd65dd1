import Foundation
import PulseHTTPServer

/// A raw HTTP/1.1 client over a POSIX socket: sends exactly the bytes given (malformed requests included) and
/// reads responses off a kept-alive connection, with Content-Length or chunked bodies.
final class WireClient {
    struct Response {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]
        func header(_ name: String) -> String? { headers.first { $0.0 == name.lowercased() }?.1 }
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let fd: Int32
    private var pending: [UInt8] = []

    /// Connects to 127.0.0.1:`port`, from `source` (another loopback address, e.g. 127.0.0.5) if given.
    init(port: UInt16, source: String? = nil, timeoutSeconds: Double = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket failed") }
        var timeout = timeval(tv_sec: Int(timeoutSeconds), tv_usec: Int((timeoutSeconds - timeoutSeconds.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { close(fd); throw Failure(description: "bind \(source) failed: \(String(cString: strerror(errno)))") }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(fd)
            throw Failure(description: "connect failed: \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(fd) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Failure(description: "send failed: \(String(cString: strerror(errno)))") }
            offset += sent
        }
    }

    /// A request with a Host header and the given extra header lines (in order).
    func request(_ method: String, _ target: String, _ headers: [(String, String)] = [], body: [UInt8] = []) throws -> Response {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if !body.isEmpty { text += "Content-Length: \(body.count)\r\n" }
        try send(Array((text + "\r\n").utf8) + body)
        return try readResponse(bodyless: method == "HEAD")
    }

    /// Reads one response (Content-Length or chunked body; none for HEAD, 204 and 304).
    func readResponse(bodyless: Bool = false) throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        var headerEnd: Int?
        while headerEnd == nil {
            if let found = Self.find(separator, in: pending, from: 0) { headerEnd = found; break }
            try fill()
        }
        let head = String(decoding: pending[..<headerEnd!], as: UTF8.self)
        pending.removeFirst(headerEnd! + 4)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure(description: "bad status line \(head)") }
        var headers: [(String, String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var response = Response(status: status, headers: headers, body: [])
        if bodyless || status == 304 || status == 204 { return response }
        if response.header("transfer-encoding")?.lowercased() == "chunked" {
            response.body = try readChunked()
            return response
        }
        let length = Int(response.header("content-length") ?? "0") ?? 0
        while pending.count < length { try fill() }
        response.body = Array(pending[..<length])
        pending.removeFirst(length)
        return response
    }

    /// A whole chunked body, up to and including its last chunk.
    func readChunked() throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            guard let chunk = try readChunk() else { return body }
            body += chunk
        }
    }

    /// The next chunk of a chunked body; nil for the last (empty) one.
    func readChunk() throws -> [UInt8]? {
        var lineEnd = Self.find([13, 10], in: pending, from: 0)
        while lineEnd == nil { try fill(); lineEnd = Self.find([13, 10], in: pending, from: 0) }
        let sizeText = String(decoding: pending[..<lineEnd!], as: UTF8.self).split(separator: ";")[0]
        guard let size = Int(sizeText, radix: 16) else { throw Failure(description: "bad chunk size \(sizeText)") }
        pending.removeFirst(lineEnd! + 2)
        while pending.count < size + 2 { try fill() }
        let chunk = Array(pending[..<size])
        pending.removeFirst(size + 2)
        return size == 0 ? nil : chunk
    }

    /// Everything until the server closes the connection (or the receive timeout).
    func readToEnd() -> [UInt8] {
        while (try? fill()) != nil {}
        defer { pending = [] }
        return pending
    }

    /// True when the server closed the connection (read returns 0 or a reset) within the receive timeout.
    func isClosedByPeer() -> Bool {
        if !pending.isEmpty { return false }
        var byte: UInt8 = 0
        let got = recv(fd, &byte, 1, 0)
        if got == 1 { pending.append(byte) }
        return got == 0 || (got < 0 && errno == ECONNRESET)
    }

    /// True when the server closes the connection within the receive timeout, whatever it still sends first.
    func closesAfterAnyRemainder() -> Bool {
        pending = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let got = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if got == 0 || (got < 0 && errno == ECONNRESET) { return true }
            if got < 0 { return false }
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let got = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard got > 0 else { throw Failure(description: got == 0 ? "connection closed" : "recv: \(String(cString: strerror(errno)))") }
        pending += chunk[..<got]
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count + start else { return nil }
        for index in start...(haystack.count - needle.count) where haystack[index..<(index + needle.count)].elementsEqual(needle) {
            return index
        }
        return nil
    }
}

/// A server on a free loopback port whose responder is a closure; `exchanges` collects the finished ones.
final class TestServer: HTTPResponder, @unchecked Sendable {
    let answer: @Sendable (HTTPRequest) -> HTTPResponse
    private let lock = NSLock()
    private var finishedExchanges: [HTTPExchange] = []
    private(set) var server: HTTPServer!

    init(_ configure: (inout HTTPServer.Configuration) -> Void = { _ in },
         answer: @escaping @Sendable (HTTPRequest) -> HTTPResponse) throws {
        self.answer = answer
        var configuration = HTTPServer.Configuration()
        configuration.listen = "127.0.0.1:0"
        configuration.threads = 2
        configure(&configuration)
        server = try HTTPServer(configuration: configuration, responder: self)
    }

    deinit { server?.stop() }

    var port: UInt16 { server.port }

    func client(source: String? = nil, timeout: Double = 10) throws -> WireClient {
        try WireClient(port: server.port, source: source, timeoutSeconds: timeout)
    }

    func respond(to request: HTTPRequest) -> HTTPResponse { answer(request) }

    func finished(_ exchange: HTTPExchange) { lock.withLock { finishedExchanges.append(exchange) } }

    /// The finished exchanges once there are `count` (or after five seconds): libmicrohttpd reports one after
    /// its last byte went out, so a client can have the response first.
    func exchanges(count: Int) -> [HTTPExchange] {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            let current = lock.withLock { finishedExchanges }
            if current.count >= count { return current }
            usleep(2_000)
        }
        return lock.withLock { finishedExchanges }
    }
}

/// A plain text answer.
func text(_ status: Int, _ body: String, _ headers: [HTTPHeader] = []) -> HTTPResponse {
    HTTPResponse(status: status, headers: headers, body: .bytes(Array(body.utf8)))
}
