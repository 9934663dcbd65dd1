import CMicroHTTPD
import Foundation

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
public final class HTTPDeferredResponse: @unchecked Sendable {
    // Everything below is guarded by `condition`.
    private let condition = NSCondition()
    private var result: HTTPResponse?
    /// Set while the connection is suspended waiting for `result`; only then may it be resumed.
    private var suspendedConnection: OpaquePointer?

    public init() {}

    /// Gives the answer (any thread). It must not itself be deferred.
    public func complete(_ response: HTTPResponse) {
        precondition(response.deferred == nil, "a deferred response cannot complete with another deferred one")
        condition.lock()
        defer { condition.unlock() }
        settle(response)
    }

    /// Records the first answer and resumes the connection if it waits. Called with the lock held.
    private func settle(_ response: HTTPResponse) {
        guard result == nil else { return }
        result = response
        condition.broadcast()
        if let connection = suspendedConnection {
            // Set only while libmicrohttpd holds the connection suspended, so it is still alive.
            suspendedConnection = nil
            MHD_resume_connection(connection)
        }
    }

    /// True once `complete` was called.
    public var isCompleted: Bool { condition.withLock { result != nil } }

    /// Waits up to `timeout` seconds for the answer: for tests and callers outside the server. Never call it
    /// on a server thread (that is what the deferral avoids).
    public func wait(timeout: Double) -> HTTPResponse? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while result == nil {
            if !condition.wait(until: deadline) { break }
        }
        return result
    }

    /// Server side, on the connection's thread inside the access handler: the answer if it is already there,
    /// otherwise suspends `connection` until `complete` resumes it and returns nil.
    func answerOrSuspend(_ connection: OpaquePointer) -> HTTPResponse? {
        condition.lock()
        defer { condition.unlock() }
        if let result { return result }
        suspendedConnection = connection
        MHD_suspend_connection(connection)
        return nil
    }

    /// Server side, when it stops: answers `fallback` if nothing was answered yet, and never suspends again.
    func abandon(with fallback: HTTPResponse) {
        condition.lock()
        defer { condition.unlock() }
        settle(fallback)
    }

    /// The answer, if given.
    var answer: HTTPResponse? { condition.withLock { result } }
}
