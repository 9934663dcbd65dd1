import Foundation
import Synchronization

/// Per-connection state, and the state of its current request from the request line (URI log callback) to
/// the completion callback. One is made per connection and reused by its requests (libmicrohttpd handles a
/// connection's requests one after another), so the hot path allocates nothing for it; a second one is made
/// only if that ever overlapped.
// @unchecked: libmicrohttpd's per-connection context: the fields marked so are guarded by the tracker's
// lock, `phase` is atomic, and the rest belong to the connection's thread.
final class RequestContext: @unchecked Sendable {
    // The connection, set when it opens.
    /// The client's address, and as text (formatted once per connection, for the log).
    var address: HTTPClientAddress?
    var client: [UInt8] = [0x2d]
    /// What the connection is doing (`ConnectionPhase`), read by the tracker's sweeper.
    let phase = Atomic<UInt64>(0)
    // Guarded by the tracker's lock.
    var fd: Int32 = -1
    var trackerIndex = -1
    /// Set when the connection was refused at the connection limits: its request gets a 503 (also read on the
    /// connection's thread, which set it).
    var refusal: ConnectionRefusal?
    /// Refused and waiting for its request (counted against `maxWaitingRefusals`).
    var waitsAsRefused = false
    /// Refused, and its request line has come (the URI log callback): its 503 is the request's to answer.
    var refusedRequestStarted = false
    /// Refused, no request within `refusalTimeout`: its 503 was written and its sending side shut.
    var refusalAnswered = false
    var closing = false

    // The current request; touched only on the connection's thread.
    var inUse = false
    var target: [UInt8] = []
    var start: UInt64 = 0
    var method: HTTPMethod = .get
    var methodText = ""
    var headersSeen = false
    var headers = HTTPRequestHeaders()
    /// The body collected so far, when the request has one.
    var body: [UInt8]?
    /// Body bytes beyond `maxRequestBodyBytes` (read and dropped; the answer is 413).
    var bodyOverrun = 0
    var responded = false
    /// The answer was written straight to the socket (libmicrohttpd then only closes the connection).
    var answeredDirectly = false
    var status = 0
    var bodyBytes = 0
    var note = "-"
    var deferred: HTTPDeferredResponse?
    var stream: HTTPEventStream?

    /// Starts a request: keeps the raw target (reusing the buffer of the previous request).
    func begin(target uri: UnsafePointer<CChar>?, start: UInt64) {
        inUse = true
        target.removeAll(keepingCapacity: true)
        if let uri { target.append(contentsOf: UnsafeRawBufferPointer(start: uri, count: strlen(uri))) }
        self.start = start
        method = .get
        methodText = ""
        headersSeen = false
        if !headers.isEmpty { headers = HTTPRequestHeaders() }
        body = nil
        bodyOverrun = 0
        responded = false
        answeredDirectly = false
        status = 0
        bodyBytes = 0
        note = "-"
        deferred = nil
        stream = nil
    }
}
