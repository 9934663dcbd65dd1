/// What the sync server tells whoever watches it (pulse-server's metrics, `PulseServerMetrics`) about the work
/// no single request shows: writes on the write threads and live advances reaching the event streams.
/// Requests themselves are counted from the access log's exchanges, outside the routes.
///
/// Called on the write threads and the event hub's thread; keep each call to a few atomic operations. With no
/// observer (the default) nothing is measured: no clock is read for it.
public protocol SyncObserver: Sendable {
    /// A queued write (enroll, diag, a staff change) ran on a write thread for `seconds`, its commit included.
    func writeFinished(seconds: Double)
    /// A live advance (the frontier moved) was handed to one event stream, `seconds` after it was committed:
    /// from the moment this instance's staff route woke the hub, or for a change made elsewhere (another
    /// instance, the CLI) from its whole-second timestamp.
    func advanceDelivered(seconds: Double)
    /// The hub delivered one live advance (once per advance, whatever the number of streams).
    func advanceSeen()
}
