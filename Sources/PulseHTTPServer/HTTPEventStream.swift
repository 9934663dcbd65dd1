import CMicroHTTPD
import Foundation
import PulseSystem

/// A long-lived response body that the application writes into from any thread: Server-Sent Events, or any
/// stream of bytes. No thread waits for it: while there is nothing to send, the connection is suspended in
/// libmicrohttpd (`MHD_suspend_connection` from the response's content callback); `send` resumes it.
///
///     let stream = HTTPEventStream { stream, end in fanOut.remove(stream) }
///     fanOut.add(stream)
///     return HTTPResponse(status: 200, headers: [HTTPHeader("Content-Type", "text/event-stream"),
///                                                 HTTPHeader("Cache-Control", "no-store")], body: .stream(stream))
///     …
///     stream.send(Array("data: slide 4\n\n".utf8))   // from any thread, any time
///
/// A stream is the body of one response. `onEnd` is called exactly once, on a server thread, when the response
/// is over: closed by `close()`, by the
/// server stopping, or because the client went away. A client that leaves is noticed at the next write, so the
/// server writes `heartbeat` (an SSE comment by default) after `HTTPServer.Configuration.streamHeartbeatSeconds`
/// of silence; `onEnd` must not block. A client that does not read gets its stream ended once
/// `maxPendingBytes` are waiting for it.
public final class HTTPEventStream: Sendable {
    /// Why a stream ended.
    public enum End: Sendable, Equatable {
        /// `close()` was called and everything sent was delivered to the socket.
        case closed
        /// The client went away or stopped reading (a write failed, a timeout, too much pending).
        case clientGone
        /// The server is stopping; the stream was closed cleanly.
        case serverStopping
    }

    /// Bytes written after `streamHeartbeatSeconds` of silence, to notice clients that left.
    public let heartbeat: [UInt8]
    /// Unsent bytes allowed before the client is considered gone.
    public let maxPendingBytes: Int

    private struct State {
        var pending: [UInt8] = []
        var pendingStart = 0
        var closing: End?
        var overflowed = false
        var ended = false
        /// Set while libmicrohttpd holds the connection suspended: only then may it be resumed.
        var suspendedConnection: OpaquePointer?
        /// The connection once the response is queued, until the request is over.
        var connection: OpaquePointer?
        var onEnd: (@Sendable (HTTPEventStream, End) -> Void)?
        var lastWrite: UInt64 = monotonicNanoseconds()
        var sent = 0

        var isOpen: Bool { closing == nil && !ended }

        mutating func resumeIfSuspended() {
            guard let suspended = suspendedConnection else { return }
            suspendedConnection = nil
            MHD_resume_connection(suspended)
        }
    }

    private let state: Condition<State>

    /// - Parameters:
    ///   - heartbeat: written after a silence (default `:\n`, an SSE comment line that clients ignore).
    ///   - maxPendingBytes: unsent bytes allowed before the stream is ended as `.clientGone` (default 1 MB).
    ///   - onEnd: called once when the stream is over, on a server thread; remove the stream from your fan-out.
    public init(
        heartbeat: [UInt8] = Array(":\n".utf8), maxPendingBytes: Int = 1 << 20,
        onEnd: @escaping @Sendable (HTTPEventStream, End) -> Void = { _, _ in }
    ) {
        self.heartbeat = heartbeat
        self.maxPendingBytes = maxPendingBytes
        self.state = Condition(State(onEnd: onEnd))
    }

    /// Queues `bytes` for the client (any thread). Returns false when the stream is over or closing (the bytes
    /// are dropped) or when the client has more than `maxPendingBytes` unread (the stream then ends).
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        state.withLock { state in
            guard state.isOpen else { return false }
            if state.pending.count - state.pendingStart + bytes.count > maxPendingBytes {
                state.overflowed = true
                state.closing = .clientGone
                state.resumeIfSuspended()
                return false
            }
            state.pending += bytes
            state.lastWrite = monotonicNanoseconds()
            state.resumeIfSuspended()
            return true
        }
    }

    /// Ends the stream after what was sent so far (any thread). `onEnd` follows with `.closed`.
    public func close() {
        finish(.closed)
    }

    /// True until the stream is closing or over.
    public var isOpen: Bool { state.withLock { $0.isOpen } }

    /// Body bytes handed to the connection so far.
    public var bytesSent: Int { state.withLock { $0.sent } }

    // MARK: Server side

    private func finish(_ reason: End) {
        state.withLock { state in
            guard state.isOpen else { return }
            state.closing = reason
            state.resumeIfSuspended()
        }
    }

    /// The response is queued on `connection`.
    func attach(_ connection: OpaquePointer) {
        state.withLock { $0.connection = connection }
    }

    /// The server is stopping: end cleanly and never suspend again.
    func stop() { finish(.serverStopping) }

    /// Writes the heartbeat if nothing was written for `interval` nanoseconds (the maintenance thread). `now` is
    /// read before the sweep walks the streams, so a stream written to meanwhile has `lastWrite` after it: its
    /// age is 0 (`ConnectionPhase.age`), not `now &- lastWrite`, about 2^64, which made a heartbeat due at once.
    func heartbeatIfSilent(now: UInt64, interval: UInt64) {
        let due = state.withLock { $0.isOpen && ConnectionPhase.age(since: $0.lastWrite, now: now) >= interval }
        if due { send(heartbeat) }
    }

    /// Bytes queued and not yet handed to the connection (tests).
    var pendingCount: Int { state.withLock { $0.pending.count - $0.pendingStart } }

    /// libmicrohttpd's content callback: up to `max` bytes into `buffer`; 0 after suspending the connection
    /// when there is nothing to send yet; end of stream once closing and drained.
    func read(into buffer: UnsafeMutablePointer<CChar>, max: Int) -> Int {
        state.withLock { state in
            if state.overflowed { return Int(MHD_CONTENT_READER_END_WITH_ERROR) }
            let available = state.pending.count - state.pendingStart
            if available > 0 {
                let count = min(available, max)
                let start = state.pendingStart
                state.pending.withUnsafeBytes { raw in
                    UnsafeMutableRawPointer(buffer).copyMemory(from: raw.baseAddress! + start, byteCount: count)
                }
                state.pendingStart += count
                if state.pendingStart == state.pending.count {
                    state.pending.removeAll(keepingCapacity: state.pending.capacity <= 16 << 10)
                    state.pendingStart = 0
                }
                state.sent += count
                return count
            }
            if state.closing != nil { return Int(MHD_CONTENT_READER_END_OF_STREAM) }
            guard let connection = state.connection else { return Int(MHD_CONTENT_READER_END_WITH_ERROR) }
            state.suspendedConnection = connection
            MHD_suspend_connection(connection)
            return 0
        }
    }

    /// The request is over (libmicrohttpd's completion callback): `completed` when the end of the stream went
    /// out. Calls `onEnd` once, outside the lock.
    func requestEnded(completed: Bool) {
        let (callback, reason): ((@Sendable (HTTPEventStream, End) -> Void)?, End) = state.withLock { state in
            guard !state.ended else { return (nil, .closed) }
            state.ended = true
            state.connection = nil
            state.suspendedConnection = nil
            let reason: End = completed && !state.overflowed ? (state.closing ?? .closed) : .clientGone
            defer { state.onEnd = nil }
            return (state.onEnd, reason)
        }
        callback?(self, reason)
    }
}

/// libmicrohttpd's content reader for stream bodies; `cls` is the stream, retained by the response.
let streamReader: MHD_ContentReaderCallback = { cls, _, buffer, max in
    guard let cls, let buffer else { return Int(MHD_CONTENT_READER_END_WITH_ERROR) }
    return Unmanaged<HTTPEventStream>.fromOpaque(cls).takeUnretainedValue().read(into: buffer, max: max)
}

/// Releases the response's reference to its stream.
let streamRelease: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    Unmanaged<HTTPEventStream>.fromOpaque(cls).release()
}
