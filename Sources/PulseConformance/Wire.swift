import Foundation
import PulseCore
import PulseDevice
import PulseSystem

/// An answer as the suite compares it.
struct WireResponse: Sendable {
    var status: Int
    /// Header lines in order, names lowercased.
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    /// Every byte as received, when the wire is a raw socket (`http://`).
    var raw: [UInt8]?

    func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name == lower }?.value
    }

    var json: JSONValue? { try? JSONValue.parse(body) }

    /// What two answers must share to be "the same": every byte but the `Date` line (which moves with the
    /// clock) off a raw socket; over https, the status, the headers but Date in order, and the body.
    var fingerprint: [UInt8] {
        if let raw {
            var lines: [[UInt8]] = []
            var start = 0
            var index = 0
            while index + 1 < raw.count {
                if raw[index] == 13 && raw[index + 1] == 10 {
                    lines.append(Array(raw[start..<index]))
                    index += 2
                    start = index
                    if lines.last?.isEmpty == true { break }
                } else {
                    index += 1
                }
            }
            let head = lines.filter { !String(decoding: $0.prefix(5), as: UTF8.self).lowercased().hasPrefix("date:") }
            return Array(head.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\r\n").utf8) + Array(raw[start...])
        }
        let head = headers.filter { $0.name != "date" }.map { "\($0.name): \($0.value)" }.sorted().joined(separator: "\n")
        return Array("\(status)\n\(head)\n\n".utf8) + body
    }

    /// `404 {"error":"notFound"}`, shortened, for the evidence.
    var summary: String {
        var text = String(decoding: body.prefix(120), as: UTF8.self).replacingOccurrences(of: "\n", with: " ")
        if body.count > 120 { text += "…" }
        return "\(status)\(text.isEmpty ? "" : " " + text)"
    }

    /// The first line where two answers' fingerprints differ, for the evidence.
    static func difference(_ a: WireResponse, _ b: WireResponse) -> String {
        let left = String(decoding: a.fingerprint, as: UTF8.self).components(separatedBy: "\r\n")
        let right = String(decoding: b.fingerprint, as: UTF8.self).components(separatedBy: "\r\n")
        for index in 0..<max(left.count, right.count) {
            let l = index < left.count ? left[index] : "(nothing)"
            let r = index < right.count ? right[index] : "(nothing)"
            if l != r { return "\"\(l.prefix(80))\" against \"\(r.prefix(80))\"" }
        }
        return "(same)"
    }
}

/// How the suite sends requests: exactly as written.
protocol Wire: Sendable {
    /// The server's path prefix (empty for a server at the root).
    var prefix: String { get }
    /// True when header lines go out exactly as given (a doubled header stays two lines).
    var isRaw: Bool { get }
    func send(_ method: String, _ target: String, headers: [(name: String, value: String)], body: [UInt8]?) throws -> WireResponse
}

extension Wire {
    func get(_ target: String, headers: [(name: String, value: String)] = []) throws -> WireResponse {
        try send("GET", target, headers: headers, body: nil)
    }
}

/// `http://`: a new raw connection per request, so every answer comes back the same way (byte comparisons).
struct RawWire: Wire {
    let host: String
    let port: Int
    let prefix: String
    var isRaw: Bool { true }

    init(url: URL) throws {
        guard let host = url.host else { throw Broken("\(url) names no host") }
        self.host = host
        port = url.port ?? 80
        prefix = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? ""
    }

    func send(_ method: String, _ target: String, headers: [(name: String, value: String)], body: [UInt8]?) throws -> WireResponse {
        let connection = try RawHTTPConnection(host: host, port: port, timeout: 15)
        defer { connection.close() }
        var text = "\(method) \(prefix)\(target) HTTP/1.1\r\nHost: \(host.contains(":") ? "[\(host)]" : host):\(port)\r\n"
        for header in headers { text += "\(header.name): \(header.value)\r\n" }
        if let body { text += "Content-Length: \(body.count)\r\n" }
        text += "Connection: close\r\n\r\n"
        try connection.send(Array(text.utf8) + (body ?? []))
        let answer = try connection.readResponse(bodyless: method == "HEAD")
        return WireResponse(status: answer.status, headers: answer.headers, body: answer.body, raw: answer.raw)
    }
}

/// `https://`: through URLSession (no raw bytes; doubled headers are merged by it).
struct SessionWire: Wire {
    let base: URL
    let transport: URLSessionTransport
    let prefix: String
    var isRaw: Bool { false }

    init(url: URL, transport: URLSessionTransport) {
        base = url
        self.transport = transport
        prefix = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? ""
    }

    func send(_ method: String, _ target: String, headers: [(name: String, value: String)], body: [UInt8]?) throws -> WireResponse {
        var root = base.absoluteString
        while root.hasSuffix("/") { root.removeLast() }
        guard let url = URL(string: root + target) else { throw Broken("\(root + target) is not a URL") }
        let answer = try transport.send(DeviceRequest(method: method, url: url, headers: headers, body: body))
        return WireResponse(status: answer.status, headers: answer.headers.map { ($0.key, $0.value) }.sorted { $0.0 < $1.0 }, body: answer.body, raw: nil)
    }
}
