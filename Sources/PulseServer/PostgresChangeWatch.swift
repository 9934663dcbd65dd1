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
            /// Whether the listener listens now; guarded by `arrivals`.
            let listening = Mutex<Bool>(true)
            /// Signalled when a synchronization token arrives and when the listener connects or disconnects.
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
                case .notification:
                    state.counter.add(1, ordering: .releasing)  // a change by any instance
                case .connected:
                    // Listening again: anything may have changed meanwhile.
                    state.counter.add(1, ordering: .releasing)
                    state.arrivals.withLock {
                        state.listening.withLock { $0 = true }
                        state.arrivals.broadcast()
                    }
                case .disconnected:
                    // `current()` sees `isConnected` false from now on.
                    state.arrivals.withLock {
                        state.listening.withLock { $0 = false }
                        state.arrivals.broadcast()
                    }
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

        /// Sends a notification of our own with `send` and waits until it comes back: then every change
        /// committed before it was counted. A notification sent while the listener is away is lost, so
        /// this waits for it to listen, and sends again if it went away before the answer came.
        /// - Returns: false when `timeout` seconds passed first.
        func synchronize(timeout: Double, send: (String) throws -> Void) throws -> Bool {
            guard listener != nil else { return true }
            let deadline = Date().addingTimeInterval(timeout)
            while true {
                let token = UUID().uuidString
                state.pending.withLock { $0[token] = false }
                defer { _ = state.pending.withLock { $0.removeValue(forKey: token) } }
                guard waitUntil(deadline, { state.listening.withLock { $0 } }) else { return false }
                try send(Self.syncPrefix + token)
                let answered = waitUntil(deadline) { state.pending.withLock { $0[token] } == true || !state.listening.withLock { $0 } }
                if state.pending.withLock({ $0[token] }) == true { return true }
                guard answered else { return false }
                // The listener went away after the token was sent: it may be lost; send another.
            }
        }

        /// Waits on `arrivals` until `condition` holds; false when `deadline` passed first.
        private func waitUntil(_ deadline: Date, _ condition: () -> Bool) -> Bool {
            state.arrivals.lock()
            defer { state.arrivals.unlock() }
            while !condition() {
                guard state.arrivals.wait(until: deadline) else { return condition() }
            }
            return true
        }
    }
}
