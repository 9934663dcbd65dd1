import Foundation
import PulsePostgres
import Synchronization

extension PostgresStorage {
    /// The in-memory generation of one instance and the listening connection that moves it.
    final class ChangeWatch: Sendable {
        /// Payloads starting with this answer `synchronize()` instead of announcing a change.
        static let syncPrefix = "sync:"

        /// What the listener's thread and the callers share.
        private final class State: Sendable {
            let counter = Atomic<Int64>(0)
            /// Synchronization tokens sent and whether they came back; guarded by `arrivals`.
            let pending = Mutex<[String: Bool]>([:])
            let arrivals = NSCondition()
        }

        private let state = State()
        private let listener: PostgresListener?

        init(configuration: PostgresConfiguration, listening: Bool) throws(PostgresError) {
            guard listening else {
                listener = nil
                return
            }
            let state = self.state
            listener = try PostgresListener(configuration: configuration.setting("application_name", "pulse-server listener"), channels: [PostgresSchema.channel]) { event in
                switch event {
                case let .notification(notification) where notification.payload.hasPrefix(Self.syncPrefix):
                    let token = String(notification.payload.dropFirst(Self.syncPrefix.count))
                    state.arrivals.withLock {
                        state.pending.withLock { if $0[token] != nil { $0[token] = true } }
                        state.arrivals.broadcast()
                    }
                case .notification, .connected:
                    // A change by any instance, or a reconnect after which anything may have changed.
                    state.counter.add(1, ordering: .releasing)
                case .disconnected:
                    break  // `current()` sees `isConnected` false from now on
                }
            }
        }

        /// The generation: stable while nothing changes and the listener is connected; a new value at
        /// every call while it is not (or when there is none).
        func current() -> Int64 {
            guard let listener, listener.isConnected else { return state.counter.add(1, ordering: .acquiringAndReleasing).newValue }
            return state.counter.load(ordering: .acquiring)
        }

        /// After this instance committed a change caches must see (its notification follows).
        func bump() { state.counter.add(1, ordering: .releasing) }

        func expectSynchronization() -> String {
            let token = UUID().uuidString
            state.pending.withLock { $0[token] = false }
            return token
        }

        func forget(_ token: String) { _ = state.pending.withLock { $0.removeValue(forKey: token) } }

        /// Waits until the notification carrying `token` arrived; false after `timeout` seconds.
        func waitForSynchronization(_ token: String, timeout: Double) -> Bool {
            guard listener != nil else { return true }
            let deadline = Date().addingTimeInterval(timeout)
            state.arrivals.lock()
            defer { state.arrivals.unlock() }
            while state.pending.withLock({ $0[token] }) != true {
                guard state.arrivals.wait(until: deadline) else { return state.pending.withLock { $0[token] } == true }
            }
            return true
        }
    }
}
