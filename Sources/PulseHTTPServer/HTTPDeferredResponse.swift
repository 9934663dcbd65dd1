import CMicroHTTPD
import Foundation
import PulseSystem

/// An answer that is given later, from any thread. A responder that would otherwise block a server thread
/// (hashing a large file, waiting for another service) returns `HTTPResponse(deferred)` at once and calls
/// `complete(_:)` when it knows the answer; meanwhile the connection is suspended in libmicrohttpd and no
/// thread waits for it.
///
///     let later = HTTPDeferredResponse()
///     work.async { later.complete(HTTPResponse(status: 200, body: .bytes(compute()))) }
///     return HTTPResponse(later)
///
/// The first `complete` wins; later calls are ignored. When the server stops before an answer is given, the
/// request gets a 503.
public final class HTTPDeferredResponse: Sendable {
    private struct State {
        var result: HTTPResponse?
        /// Set while the connection is suspended waiting for `result`; only then may it be resumed.
        var suspendedConnection: OpaquePointer?

        /// Records the first answer and resumes the connection if it waits.
        mutating func settle(_ response: HTTPResponse) {
            guard result == nil else { return }
            result = response
            if let connection = suspendedConnection {
                // Set only while libmicrohttpd holds the connection suspended, so it is still alive.
                suspendedConnection = nil
                MHD_resume_connection(connection)
            }
        }
    }

    private let state = Condition(State())

    public init() {}

    /// Gives the answer (any thread). It must not itself be deferred.
    public func complete(_ response: HTTPResponse) {
        precondition(response.deferred == nil, "a deferred response cannot complete with another deferred one")
        state.withLock(waking: .all) { $0.settle(response) }
    }

    /// True once `complete` was called.
    public var isCompleted: Bool { state.withLock { $0.result != nil } }

    /// Waits up to `timeout` seconds for the answer: for tests and callers outside the server. Never call it
    /// on a server thread (that is what the deferral avoids).
    public func wait(timeout: Double) -> HTTPResponse? {
        state.wait(until: { $0.result != nil }, timeout: timeout) { $0.result }
    }

    /// Server side, on the connection's thread inside the access handler: the answer if it is already there,
    /// otherwise suspends `connection` until `complete` resumes it and returns nil.
    func answerOrSuspend(_ connection: OpaquePointer) -> HTTPResponse? {
        state.withLock { state in
            if let result = state.result { return result }
            state.suspendedConnection = connection
            MHD_suspend_connection(connection)
            return nil
        }
    }

    /// Server side, when it stops: answers `fallback` if nothing was answered yet, and never suspends again.
    func abandon(with fallback: HTTPResponse) {
        state.withLock(waking: .all) { $0.settle(fallback) }
    }

    /// The answer, if given.
    var answer: HTTPResponse? { state.withLock { $0.result } }
}
