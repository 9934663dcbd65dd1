import PulseServerStorage
import Synchronization

/// The diag samples this instance stored since the live view last looked, for the sessions a live view
/// watches: the console's live view sends these rows as deltas, not the whole table (docs/console.md).
///
/// `note` is one lock and a dictionary lookup, nothing when no live view watches the session, and keeps at
/// most the newest sample per device (`maxDevices` per session), so a burst of samples costs bounded memory.
/// Samples stored by another instance (PostgreSQL behind a load balancer) are not seen here.
public final class LiveSamples: Sendable {
    private struct State {
        /// Watchers per session.
        var watchers: [String: Int] = [:]
        /// Per watched session, the newest unsent sample of each device.
        var pending: [String: [String: DiagSample]] = [:]
    }

    private let state = Mutex(State())
    /// Devices kept per session between two looks; past it a sample of a new device waits for the next one.
    public let maxDevices: Int

    public init(maxDevices: Int = 20_000) { self.maxDevices = maxDevices }

    /// A live view of session `id` begins watching.
    public func watch(session id: String) { state.withLock { $0.watchers[id, default: 0] += 1 } }

    /// A live view of session `id` ends.
    public func unwatch(session id: String) {
        state.withLock { state in
            let left = (state.watchers[id] ?? 1) - 1
            state.watchers[id] = left > 0 ? left : nil
            if left <= 0 { state.pending[id] = nil }
        }
    }

    /// A sample was stored (the diag route, after its write).
    func note(_ sample: DiagSample) {
        state.withLock { state in
            guard state.watchers[sample.sessionId] != nil else { return }
            // In place: a copy of the session's dictionary per sample would make a burst of N samples cost N².
            // (No local holds the dictionary either: it would be a second reference, and the write a copy.)
            let count = state.pending[sample.sessionId]?.count ?? 0
            guard count < maxDevices || state.pending[sample.sessionId]?[sample.deviceId] != nil else { return }
            state.pending[sample.sessionId, default: [:]][sample.deviceId] = sample
        }
    }

    /// The samples noted for session `id` since the last call, one per device, and forgets them.
    public func take(session id: String) -> [DiagSample] {
        state.withLock { state in
            guard let pending = state.pending.removeValue(forKey: id) else { return [] }
            return Array(pending.values)
        }
    }
}
