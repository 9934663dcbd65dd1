import Synchronization

/// The two probes a load balancer or an orchestrator asks, the same on both servers:
///
/// | route | answers |
/// |---|---|
/// | `GET /livez` | 200 `ok` while the process answers at all (restart it when this fails) |
/// | `GET /readyz` | 200 `ok` while it can serve (storage reachable) and is not stopping; 503 otherwise (send it nothing new) |
///
/// After SIGTERM the server calls `beginDraining()` first: `/readyz` answers 503 from that moment, with
/// `Connection: close`, while every other route keeps answering until the listener closes, so a balancer that
/// polls `/readyz` moves traffic away before the process stops. `/healthz` keeps its older meaning (storage).
public final class Readiness: Sendable {
    private let draining = Atomic<Bool>(false)

    public init() {}

    /// From now on `/readyz` answers 503. Never undone: a stopping process does not come back.
    public func beginDraining() { draining.store(true, ordering: .releasing) }

    public var isDraining: Bool { draining.load(ordering: .acquiring) }

    /// The start of a stop: `/readyz` answers 503 from now on, and the caller keeps serving `delay` seconds more,
    /// so a load balancer that polls `/readyz` moves traffic away before the listener closes. A second stop signal
    /// ends the wait early. `log` gets one line for each of those.
    public func drain(for delay: Double, log: (String) -> Void) {
        beginDraining()
        guard delay > 0 else { return }
        log("draining: /readyz answers 503; serving \(Int(delay)) s more before closing the listener")
        if let signal = ServerSignals.waitForTermination(seconds: delay) {
            log("\(ServerSignals.name(signal)) again: stopping now")
        }
    }

    static let livePath = Array("/livez".utf8)
    static let readyPath = Array("/readyz".utf8)

    /// True for `/livez` and `/readyz` (a request target's path, without the query). Called on every request,
    /// so it compares bytes of a concrete type (a generic `elementsEqual` across modules cost 7,000 instructions).
    public static func isProbe(_ path: ArraySlice<UInt8>) -> Bool {
        Bytes.equal(path, livePath) || Bytes.equal(path, readyPath)
    }

    /// The answer to the probe at `path` (one that `isProbe` accepted). `ready` says whether the server can serve
    /// now; it is asked only when not draining, and its answer (200 or the server's own 503) is used as it is.
    public func answer(_ path: ArraySlice<UInt8>, ready: () -> HTTPResponse) -> HTTPResponse {
        if Bytes.equal(path, Self.livePath) { return HTTPResponse(Self.live, note: "live") }
        if isDraining { return HTTPResponse(Self.drainingAnswer, note: "draining") }
        return ready()
    }

    private static let textHeaders = [HTTPHeader("Content-Type", "text/plain; charset=utf-8"), HTTPHeader("Cache-Control", "no-store")]
    private static let live = SharedResponse(HTTPResponse(status: 200, headers: textHeaders, body: .bytes(Array("ok\n".utf8))))
    private static let drainingAnswer = SharedResponse(HTTPResponse(
        status: 503, headers: textHeaders + [HTTPHeader("Connection", "close")], body: .bytes(Array("draining\n".utf8))))
}
