import Foundation
import Synchronization

/// A request as the device sends it.
public struct DeviceRequest: Sendable {
    public var method: String
    public var url: URL
    /// Header lines in order (names as given).
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]?

    public init(method: String = "GET", url: URL, headers: [(name: String, value: String)] = [], body: [UInt8]? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// A complete answer.
public struct DeviceResponse: Sendable {
    public var status: Int
    /// Header values by lowercased name.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The value of header `name` (any case).
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// What a transport hands over while an answer arrives: its head once, then its body in pieces.
public enum TransportEvent: Sendable {
    case head(status: Int, headers: [String: String])
    case data([UInt8])
}

/// How the device talks HTTP. `URLSessionTransport` is the real one; tests may put a fake in its place.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and calls `receive` with the answer's head, then with its body as it arrives (Server-Sent
    /// Events and large blobs are never held whole). `receive` runs on the transport's own thread: it must not
    /// block on another request. Throwing from it cancels the exchange and is rethrown. Returns when the answer
    /// is complete, the connection failed (`DeviceError.network`) or `cancellation` fired (`CancellationError`).
    func exchange(_ request: DeviceRequest, cancellation: Cancellation?, _ receive: @escaping @Sendable (TransportEvent) throws -> Void) throws
}

extension HTTPTransport {
    /// Sends `request` and collects the whole answer.
    public func send(_ request: DeviceRequest, cancellation: Cancellation? = nil) throws -> DeviceResponse {
        let collector = Collector()
        try exchange(request, cancellation: cancellation, collector.receive)
        return collector.response
    }
}

/// A way to stop an exchange from another thread (the watcher's streams, a test ending a watch).
public final class Cancellation: Sendable {
    private let state = Mutex<(cancelled: Bool, hooks: [Int: @Sendable () -> Void], next: Int)>((false, [:], 0))

    public init() {}

    /// Stops every exchange that watches this (now and later).
    public func cancel() {
        let hooks = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.cancelled else { return [] }
            state.cancelled = true
            defer { state.hooks = [:] }
            return Array(state.hooks.values)
        }
        hooks.forEach { $0() }
    }

    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Runs `hook` on `cancel()` (at once if already cancelled); returns a token for `remove`.
    func onCancel(_ hook: @escaping @Sendable () -> Void) -> Int {
        let (token, already) = state.withLock { state -> (Int, Bool) in
            guard !state.cancelled else { return (-1, true) }
            state.next += 1
            state.hooks[state.next] = hook
            return (state.next, false)
        }
        if already { hook() }
        return token
    }

    func remove(_ token: Int) { _ = state.withLock { $0.hooks.removeValue(forKey: token) } }

    /// Sleeps up to `seconds`; returns false when cancelled meanwhile.
    public func sleep(_ seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if isCancelled { return false }
            Thread.sleep(forTimeInterval: min(0.02, max(0, deadline.timeIntervalSinceNow)))
        }
        return !isCancelled
    }
}
