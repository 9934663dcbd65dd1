import Foundation
import PulsePostgres
import PulseSystem
import Synchronization

extension PostgresStorage {
    /// The in-memory generation of one instance and the listening connection that moves it.
    final class ChangeWatch: Sendable {
        /// Payloads starting with this answer `synchronize()` instead of announcing a change.
        static let syncPrefix = "sync:"

        /// Every kind of change a cache tells apart.
        static let everything: StorageGeneration.Kinds = [.credentials, .devices, .sessions, .content]

        /// What the listener's thread and the callers share.
        private final class State: Sendable {
            let generation = Mutex(StorageGeneration(0))
            /// Synchronization tokens sent and whether they came back, and whether the listener listens now;
            /// waiters are woken when a token arrives and when the listener connects or disconnects.
            let arrivals = Condition((pending: [String: Bool](), listening: true))
            /// Called after a notification moved the generation (`observeChanges`).
            let observers = Mutex<[@Sendable (StorageGeneration.Kinds) -> Void]>([])

            /// Tells every observer that `kinds` moved.
            func announce(_ kinds: StorageGeneration.Kinds) {
                for observer in observers.withLock({ $0 }) { observer(kinds) }
            }

            /// Moves `value` and the counter of each kind in `kinds`; returns the new generation.
            @discardableResult
            func bump(_ kinds: StorageGeneration.Kinds) -> StorageGeneration {
                generation.withLock { generation in
                    generation.value += 1
                    if kinds.contains(.credentials) { generation.credentials += 1 }
                    if kinds.contains(.devices) { generation.devices += 1 }
                    if kinds.contains(.sessions) { generation.sessions += 1 }
                    if kinds.contains(.content) { generation.content += 1 }
                    return generation
                }
            }
        }

        private let state = State()
        private let listener: PostgresListener?

        /// Times the listening connection came back after it broke.
        var reconnects: Int { listener?.reconnects ?? 0 }

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
                    state.arrivals.withLock(waking: .all) { if $0.pending[token] != nil { $0.pending[token] = true } }
                case let .notification(notification):
                    let kinds = Self.kinds(of: notification.payload)
                    state.bump(kinds)  // a change by any instance
                    state.announce(kinds)
                case .connected:
                    // Listening again: anything may have changed meanwhile.
                    state.bump(Self.everything)
                    state.announce(Self.everything)
                    state.arrivals.withLock(waking: .all) { $0.listening = true }
                case .disconnected:
                    // `current()` sees `isConnected` false from now on.
                    state.arrivals.withLock(waking: .all) { $0.listening = false }
                }
            }
        }

        /// The generation: stable while nothing changes and the listener is connected; new values (every
        /// kind) at every call while it is not, or when there is none.
        func current() -> StorageGeneration {
            guard let listener, listener.isConnected else { return state.bump(Self.everything) }
            return state.generation.withLock { $0 }
        }

        /// Calls `handler` after every notification, with the kinds it moved (see `ServerStorage.observeChanges`).
        func observe(_ handler: @escaping @Sendable (StorageGeneration.Kinds) -> Void) {
            state.observers.withLock { $0.append(handler) }
        }

        /// After this instance committed a change of `kinds` (its notification follows and bumps again:
        /// harmless, a cache reloads once more).
        func bump(_ kinds: StorageGeneration.Kinds) { state.bump(kinds) }

        /// The kinds of change a notification's payload (`<table>:<operation>`, or
        /// `session_changes:<kind>:<session>`) stands for, as `SQLiteStorage` counts them: an enroll (a
        /// new device, a credential's count) moves only `value` (the device is a cache miss anyway), an
        /// import's change-log entry moves content too. Anything not recognized moves every kind.
        static func kinds(of payload: String) -> StorageGeneration.Kinds {
            let parts = payload.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            let detail = parts.count > 1 ? parts[1] : ""
            switch parts.first ?? "" {
            case "credentials": return detail == "ENROLL" ? [] : .credentials
            case "certificate_keys", "answer_keys": return .credentials  // CertificateKeyring, AnswerKeyring read them again
            case "devices": return detail == "INSERT" ? [] : .devices
            case "sessions", "venue_networks": return .sessions
            case "session_changes": return detail == "content" ? [.sessions, .content] : .sessions
            case "key_tables", "series", "series_sessions": return .content
            default: return everything
            }
        }

        /// Sends a notification of our own with `send` and waits until it comes back: then every change
        /// committed before it was counted. A notification sent while the listener is away is lost, so
        /// this waits for it to listen, and sends again if it went away before the answer came.
        /// - Returns: false when `timeout` seconds passed first.
        func synchronize(timeout: Double, send: (String) throws -> Void) throws -> Bool {
            guard listener != nil else { return true }
            let deadline = Date().addingTimeInterval(timeout)
            while true {
                let token = UUID().uuidString
                state.arrivals.withLock { $0.pending[token] = false }
                defer { _ = state.arrivals.withLock { $0.pending.removeValue(forKey: token) } }
                guard waitUntil(deadline, { $0.listening }) else { return false }
                try send(Self.syncPrefix + token)
                let answered = waitUntil(deadline) { $0.pending[token] == true || !$0.listening }
                if state.arrivals.withLock({ $0.pending[token] }) == true { return true }
                guard answered else { return false }
                // The listener went away after the token was sent: it may be lost; send another.
            }
        }

        /// Waits on `arrivals` until `condition` holds; false when `deadline` passed first.
        private func waitUntil(_ deadline: Date, _ condition: ((pending: [String: Bool], listening: Bool)) -> Bool) -> Bool {
            state.arrivals.wait(until: condition, timeout: deadline.timeIntervalSinceNow) { condition($0) }
        }
    }
}
