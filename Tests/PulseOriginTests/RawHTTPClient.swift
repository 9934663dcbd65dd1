import Foundation

/// A deliberately small HTTP/1.1 client over a POSIX socket: sends exactly the bytes given (no URL
/// normalisation, so path tricks reach the server as written) and reads responses off a kept-alive connection.
final class RawHTTPClient {
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
        func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private(set) var fd: Int32
    private var pending: [UInt8] = []

    /// Connects to 127.0.0.1:`port`, from the loopback address `source` (e.g. 127.0.0.5) if given.
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
            guard bound == 0 else { close(fd); throw Failure(description: "bind \(source): \(String(cString: strerror(errno)))") }
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

    deinit { if fd >= 0 { close(fd) } }

    /// Hands the socket over (the caller closes it).
    func takeDescriptor() -> Int32 {
        defer { fd = -1 }
        return fd
    }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Failure(description: "send failed: \(String(cString: strerror(errno)))") }
            offset += sent
        }
    }

    /// GET-style request with the given extra header lines.
    func request(_ method: String, _ target: String, _ headers: [String: String] = [:]) throws -> Response {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        try send(text)
        return try readResponse(bodyless: method == "HEAD")
    }

    /// Reads one response; `bodyless` for HEAD (Content-Length describes a body that is not sent).
    func readResponse(bodyless: Bool = false, readBody: Bool = true) throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        var headerEnd: Int?
        while headerEnd == nil {
            if let found = Self.find(separator, in: pending) { headerEnd = found; break }
            try fill()
        }
        let head = String(decoding: pending[..<headerEnd!], as: UTF8.self)
        pending.removeFirst(headerEnd! + 4)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure(description: "bad status line \(head)") }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var response = Response(status: status, headers: headers, body: [])
        let length = bodyless || status == 304 || status == 204 ? 0 : Int(headers["content-length"] ?? "0") ?? 0
        if readBody {
            while pending.count < length { try fill() }
            response.body = Array(pending[..<length])
            pending.removeFirst(length)
        }
        return response
    }

    /// Reads whatever arrives until `count` bytes are buffered (for bodies read later).
    func readBytes(_ count: Int) throws -> [UInt8] {
        while pending.count < count { try fill() }
        defer { pending.removeFirst(count) }
        return Array(pending[..<count])
    }

    /// True when the server has closed the connection already (without waiting).
    func isClosedNow() -> Bool {
        var byte: UInt8 = 0
        let got = recv(fd, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
        return got == 0 || (got < 0 && errno == ECONNRESET)
    }

    /// True when the server closed the connection (read returns 0) within the receive timeout.
    func isClosedByPeer() -> Bool {
        var byte: UInt8 = 0
        let got = recv(fd, &byte, 1, 0)
        return got == 0 || (got < 0 && errno == ECONNRESET)
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let got = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard got > 0 else { throw Failure(description: got == 0 ? "connection closed" : "recv: \(String(cString: strerror(errno)))") }
        pending += chunk[..<got]
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start..<(start + needle.count)].elementsEqual(needle) {
            return start
        }
        return nil
    }
}
