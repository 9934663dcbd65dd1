import Foundation
import PulseCore
import Synchronization

/// The device's side of the sync API: unsigned calls (enroll, time, the certificate keys, assets) and
/// signed ones (`X-Pulse-Device`), over one `HTTPTransport`, all counted by one `TrafficMeter`.
///
/// A signed request answered `401 staleSignature` reads `GET /api/sync/time`, corrects the clock's offset
/// and is sent again once; a `429` is sent again after its `Retry-After` (twice at most, and only for a
/// short wait). Every other answer is the caller's.
public final class SyncClient: Sendable {
    /// The server's base URL (scheme, host, port, and a path prefix if it has one), without a trailing slash.
    public let server: URL
    let transport: any HTTPTransport
    public let signer: RequestSigner?
    public let clock: DeviceClock
    public let meter: TrafficMeter
    /// The longest `Retry-After` a signed request waits out on its own.
    public let maxRetryAfter: Double

    public init(
        server: URL, transport: any HTTPTransport, signer: RequestSigner? = nil, clock: DeviceClock = DeviceClock(),
        meter: TrafficMeter = TrafficMeter(), maxRetryAfter: Double = 5
    ) {
        self.server = Self.trimmed(server)
        self.transport = transport
        self.signer = signer
        self.clock = clock
        self.meter = meter
        self.maxRetryAfter = maxRetryAfter
    }

    /// `url` without a trailing slash.
    static func trimmed(_ url: URL) -> URL {
        var text = url.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return URL(string: text) ?? url
    }

    /// Parses a base URL given on the command line (`http://` or `https://`, a host, no query).
    public static func baseURL(_ text: String, option: String) throws -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              url.host?.isEmpty == false, url.query == nil, url.fragment == nil
        else { throw DeviceError(.badInput, "\(option) \(text): give a base URL like https://sync.example.net or http://127.0.0.1:8080") }
        return trimmed(url)
    }

    /// The request-target on the wire for `target` (which starts with `/`): the base URL's path prefix, then it.
    public func wireTarget(_ target: String) -> String {
        let prefix = URLComponents(url: server, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? ""
        return prefix + target
    }

    /// The absolute URL of `target` on `base` (the server unless given).
    public func url(_ target: String, on base: URL? = nil) throws -> URL {
        let text = Self.trimmed(base ?? server).absoluteString + target
        guard let url = URL(string: text) else { throw DeviceError(.badInput, "\(text) is not a URL") }
        return url
    }

    // MARK: Unsigned

    /// Sends `request` as it is, counted.
    public func exchange(
        _ request: DeviceRequest, cancellation: Cancellation? = nil, _ receive: @escaping @Sendable (TransportEvent) throws -> Void
    ) throws {
        meter.request()
        let meter = self.meter
        try transport.exchange(request, cancellation: cancellation) { event in
            if case let .data(bytes) = event { meter.received(bytes.count) }
            try receive(event)
        }
    }

    /// Sends `request` and collects the answer, counted.
    public func send(_ request: DeviceRequest, cancellation: Cancellation? = nil) throws -> DeviceResponse {
        let collector = Collector()
        try exchange(request, cancellation: cancellation, collector.receive)
        return collector.response
    }

    /// An unsigned GET of `target` on the server.
    public func get(_ target: String, headers: [(name: String, value: String)] = []) throws -> DeviceResponse {
        try send(DeviceRequest(url: try url(target), headers: headers))
    }

    // MARK: Signed

    /// A signed request, collected.
    public func signed(
        _ method: String, _ target: String, headers: [(name: String, value: String)] = [], body: [UInt8]? = nil,
        cancellation: Cancellation? = nil
    ) throws -> DeviceResponse {
        let collector = Collector()
        try signedExchange(method, target, headers: headers, body: body, cancellation: cancellation, collector.receive)
        return collector.response
    }

    /// A signed request whose answer streams to `receive`. 401 staleSignature and short 429s are handled
    /// here (their bodies are held back, not passed on) unless they are the final answer.
    public func signedExchange(
        _ method: String, _ target: String, headers: [(name: String, value: String)] = [], body: [UInt8]? = nil,
        cancellation: Cancellation? = nil, _ receive: @escaping @Sendable (TransportEvent) throws -> Void
    ) throws {
        guard let signer else { throw DeviceError(.deviceFolder, "this client has no device key to sign with") }
        var correctedClock = false
        var rateRetries = 0
        while true {
            let timestamp = Int64(clock.now.rounded(.down))
            let header = try signer.header(method: method, target: wireTarget(target), body: body ?? [], timestamp: timestamp)
            let request = DeviceRequest(method: method, url: try url(target), headers: headers + [("X-Pulse-Device", header)], body: body)
            let held = Mutex<(status: Int, headers: [String: String], body: [UInt8])?>(nil)
            try exchange(request, cancellation: cancellation) { event in
                switch event {
                case let .head(status, headers) where status == 401 || status == 429:
                    held.withLock { $0 = (status, headers, []) }
                case let .data(bytes) where held.withLock({ $0 != nil }):
                    held.withLock { $0!.body += bytes }
                default:
                    try receive(event)
                }
            }
            guard let answer = held.withLock({ $0 }) else { return }
            if answer.status == 401, !correctedClock, Self.isStale(answer.body) {
                correctedClock = true
                try correctClock()
                continue
            }
            if answer.status == 429, rateRetries < 2, let wait = answer.headers["retry-after"].flatMap(Double.init), wait <= maxRetryAfter {
                rateRetries += 1
                if let cancellation {
                    guard cancellation.sleep(max(wait, 0.05)) else { throw CancellationError() }
                } else {
                    Thread.sleep(forTimeInterval: max(wait, 0.05))
                }
                continue
            }
            try receive(.head(status: answer.status, headers: answer.headers))
            if !answer.body.isEmpty { try receive(.data(answer.body)) }
            return
        }
    }

    static func isStale(_ body: [UInt8]) -> Bool {
        (try? JSONValue.parse(body))?["error"]?.stringValue == "staleSignature"
    }

    /// Reads `GET /api/sync/time` and sets the clock's offset from it.
    public func correctClock() throws {
        let sent = clock.local
        let response: DeviceResponse
        do { response = try get("/api/sync/time") } catch {
            throw DeviceError(.network, "the server refused the signature's time (401 staleSignature), and its clock could not be read: \(error)")
        }
        let received = clock.local
        guard response.status == 200, let seconds = (try? JSONValue.parse(response.body))?["unixSeconds"]?.intValue else {
            throw DeviceError(.server, "GET /api/sync/time answered \(response.status) without unixSeconds; cannot correct the device's clock")
        }
        clock.learn(serverSeconds: Int64(seconds), sent: sent, received: received)
    }

    /// One line saying why `response` (to `what`) is not what the device asked for.
    public static func problem(_ response: DeviceResponse, _ what: String) -> DeviceError {
        let json = try? JSONValue.parse(response.body)
        let code = json?["error"]?.stringValue
        switch response.status {
        case 404:
            return DeviceError(.server, "\(what): the server answered its flat 404 (an unknown or revoked device, a bad signature, "
                + "or something outside this device's scope)")
        case 401 where code == "staleSignature":
            return DeviceError(.server, "\(what): the server refused the signature's time (401 staleSignature) even after its clock was read")
        case 429:
            return DeviceError(.server, "\(what): rate limited (429; Retry-After \(response.header("retry-after") ?? "?") s)")
        case 400:
            let field = json?["field"]?.stringValue.map { " (field \($0))" } ?? ""
            return DeviceError(.server, "\(what): the server refused the request: 400 \(code ?? "")\(field)")
        default:
            return DeviceError(.server, "\(what): the server answered \(response.status)\(code.map { " \($0)" } ?? "")")
        }
    }
}

/// Collects an exchange's answer.
final class Collector: Sendable {
    private let value = Mutex(DeviceResponse(status: 0, headers: [:], body: []))

    func receive(_ event: TransportEvent) {
        value.withLock { response in
            switch event {
            case let .head(status, headers):
                response.status = status
                response.headers = headers
                response.body = []
            case let .data(bytes):
                response.body += bytes
            }
        }
    }

    var response: DeviceResponse { value.withLock { $0 } }
}
