import Foundation
import PulseCore
import PulseHTTPServer
import PulseServer
import PulseSystem

/// A loopback HTTP proxy between pulse-device and pulse-server, as a CDN, WAF or load balancer that
/// terminates TLS could be: it forwards every request over a socket of its own, keeps every manifest answer
/// and keys answer it sees (by device and request), and in a hostile `mode` changes those it passes on.
final class HostileProxy: HTTPResponder, @unchecked Sendable {
    enum Mode: String, Sendable, CaseIterable {
        case clean
        /// Serves the first 200 it kept for this device and request (an older deck).
        case replayOlder
        /// Removes `Pulse-Signature`.
        case stripSignature
        /// Changes one character of the signature.
        case alterSignature
        /// Asks without If-None-Match (so a body comes back) and swaps the first slide's asset hash for another's.
        case swapAssetHash
        /// Serves the latest answer another device got for the same request.
        case anotherDevicesAnswer
        /// Serves the latest answer it kept for this device and request, however old.
        case freeze
    }

    struct Kept {
        var device: String
        var status: Int
        var headers: [(name: String, value: String)]
        var body: [UInt8]
    }

    /// What the proxy does to `GET /api/sync/time` (unsigned: any box in the path can change it).
    enum TimeMode: Sendable, Equatable {
        case pass
        /// Adds this many seconds to `unixSeconds` (a clock that jumped ahead, or a proxy pushing the device's).
        case shift(Int)
        /// Answers 404 (the device cannot read the server's clock through it).
        case block
    }

    let upstream: UInt16
    private let lock = NSLock()
    private var currentMode = Mode.clean
    private var currentTime = TimeMode.pass
    private var timeReads = 0
    private var hideAnswerKeys = false
    private var kept: [String: [Kept]] = [:]
    private var changedCount = 0
    private var server: HTTPServer?

    init(upstream: UInt16) throws {
        self.upstream = upstream
        var settings = HTTPServer.Configuration()
        settings.listen = "127.0.0.1:0"
        settings.threads = 4
        settings.requestHeaders = SyncServer.requestHeaders
        settings.maxConnectionsPerIP = 0
        settings.maxRequestBodyBytes = 1 << 20
        server = try HTTPServer(configuration: settings, responder: self)
    }

    func stop() { server?.stop() }

    var url: URL { URL(string: "http://127.0.0.1:\(server?.port ?? 0)")! }
    var mode: Mode {
        get { lock.withLock { currentMode } }
        set { lock.withLock { currentMode = newValue } }
    }
    /// Manifest answers changed so far (a hostile mode that changed nothing proves nothing).
    var changed: Int { lock.withLock { changedCount } }
    var time: TimeMode {
        get { lock.withLock { currentTime } }
        set { lock.withLock { currentTime = newValue } }
    }
    /// `GET /api/sync/time` requests seen so far.
    var timeRequests: Int { lock.withLock { timeReads } }
    /// Answers 404 for `GET /api/sync/answer-keys` (as a hostile box would, or a WAF passing only the routes it knows).
    var hidesAnswerKeys: Bool {
        get { lock.withLock { hideAnswerKeys } }
        set { lock.withLock { hideAnswerKeys = newValue } }
    }

    func finished(_ exchange: HTTPExchange) {}

    func respond(to request: HTTPRequest) -> HTTPResponse {
        let target = String(decoding: request.target, as: UTF8.self)
        let path = String(target.prefix { $0 != "?" })
        let isManifest = path == "/api/sync/manifest" || (path.hasPrefix("/api/sync/series/") && path.hasSuffix("/manifest"))
        let isSigned = isManifest || path == "/api/sync/keys"
        let device = request.headers["x-pulse-device"].map { String(decoding: $0.prefix { $0 != UInt8(ascii: ";") }, as: UTF8.self) } ?? ""
        let mode = self.mode
        if path == "/api/sync/answer-keys" && hidesAnswerKeys {
            return HTTPResponse(status: 404, body: .bytes(Array("{\"error\":\"notFound\"}".utf8)))
        }
        if path == "/api/sync/time" {
            let time = lock.withLock { () -> TimeMode in
                timeReads += 1
                return currentTime
            }
            if time == .block { return HTTPResponse(status: 404, body: .bytes(Array("{\"error\":\"notFound\"}".utf8))) }
        }
        var headers: [(String, String)] = []
        for name in SyncServer.requestHeaders where name != "host" {
            if name == "if-none-match" && isManifest && mode == .swapAssetHash { continue }
            for value in request.headers.values(name) { headers.append((name, String(decoding: value, as: UTF8.self))) }
        }
        let answer: RawHTTPResponse
        do {
            let connection = try RawHTTPConnection(host: "127.0.0.1", port: Int(upstream))
            defer { connection.close() }
            answer = try connection.request(request.method.description, target, headers, body: request.body ?? [])
        } catch {
            return HTTPResponse(status: 502, body: .bytes(Array("{\"error\":\"badGateway\"}".utf8)))
        }
        var out = Kept(device: device, status: answer.status, headers: answer.headers, body: answer.body)
        if path == "/api/sync/time", case let .shift(seconds) = time, case var .object(fields)? = try? JSONValue.parse(answer.body),
           let now = fields["unixSeconds"]?.intValue {
            fields["unixSeconds"] = .int(now + seconds)
            out.body = JSONValue.object(fields).canonicalBytes
        }
        guard isSigned, answer.status == 200 || answer.status == 304 else { return Self.response(out) }
        let replaced: Kept? = lock.withLock {
            defer { kept[target, default: []].append(out) }
            let mine = kept[target, default: []].filter { $0.device == device }
            switch mode {
            case .replayOlder: return mine.first { $0.status == 200 }
            case .freeze: return mine.last
            case .anotherDevicesAnswer: return kept[target, default: []].last { $0.device != device }
            default: return nil
            }
        }
        switch mode {
        case .clean: break
        case .replayOlder, .freeze, .anotherDevicesAnswer:
            guard let replaced else { break }
            out = replaced
        case .stripSignature:
            out.headers.removeAll { $0.name == "pulse-signature" }
        case .alterSignature:
            out.headers = out.headers.map { header in
                guard header.name == "pulse-signature" else { return header }
                // One character of the signature changed for another base64url one: well formed, but wrong.
                var characters = Array(header.value)
                guard let dots = header.value.range(of: "..") else { return header }
                let at = header.value.distance(from: header.value.startIndex, to: dots.upperBound) + 10
                guard at < characters.count else { return header }
                characters[at] = characters[at] == "A" ? "B" : "A"
                return (header.name, String(characters))
            }
        case .swapAssetHash:
            out.body = Self.swapFirstAsset(out.body)
        }
        if mode != .clean { lock.withLock { changedCount += 1 } }
        return Self.response(out)
    }

    static func response(_ kept: Kept) -> HTTPResponse {
        let hop: Set<String> = ["content-length", "transfer-encoding", "connection", "keep-alive", "date"]
        return HTTPResponse(
            status: kept.status, headers: kept.headers.filter { !hop.contains($0.name) }.map { HTTPHeader($0.name, $0.value) },
            body: kept.status == 304 || kept.body.isEmpty ? .empty : .bytes(kept.body))
    }

    /// The manifest with its first slide's `assetHash` replaced by the second slide's.
    static func swapFirstAsset(_ body: [UInt8]) -> [UInt8] {
        guard case var .object(fields)? = try? JSONValue.parse(body), var slides = fields["slides"]?.arrayValue, slides.count >= 2,
              case var .object(first) = slides[0], let other = slides[1]["assetHash"]
        else { return body }
        first["assetHash"] = other
        slides[0] = .object(first)
        fields["slides"] = .array(slides)
        return JSONValue.object(fields).canonicalBytes
    }
}
