import Synchronization

/// Which devices hold which slides' keys, as this process answered them: each signed `GET /api/sync/keys`
/// records the released range it answered (for the session's deckVersion), and each event stream the device
/// that opened it. The console's clicker shows "K of D devices have this slide's key" from it: D the devices
/// seen on the session (a stream or a key fetch), K those whose last answer for the current deck included
/// the slide.
///
/// In memory and per process: with several instances behind one balancer each counts the devices it served
/// (docs/console.md). Bounded: at most `capacity` devices per session are tracked (beyond, new ones are not).
public final class KeyHolders: Sendable {
    private struct Held: Sendable, Equatable {
        var deckVersion: Int
        /// Slides 0..<released are held.
        var released: Int
    }

    private let state = Mutex<[String: [String: Held]]>([:])
    private let changes = Atomic<UInt64>(0)
    let capacity: Int

    public init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    /// Moves whenever a count may have changed: a cheap "anything new?" for whoever shows them.
    public var version: UInt64 { changes.load(ordering: .acquiring) }

    /// The device was answered `released` of session `id`'s keys for `deckVersion`.
    public func record(session id: String, device: String, deckVersion: Int, released: Range<Int>) {
        let held = Held(deckVersion: deckVersion, released: released.isEmpty ? 0 : released.upperBound)
        let changed: Bool = state.withLock { state in
            var devices = state.removeValue(forKey: id) ?? [:]
            defer { state[id] = devices }
            let before = devices[device]
            guard before != nil || devices.count < capacity else { return false }
            guard before?.deckVersion != held.deckVersion || before?.released != held.released else { return false }
            devices[device] = held
            return true
        }
        if changed { changes.add(1, ordering: .releasing) }
    }

    /// The device opened an event stream on session `id` (it counts among the session's devices).
    public func watching(session id: String, device: String) {
        let changed: Bool = state.withLock { state in
            guard state[id]?[device] == nil, (state[id]?.count ?? 0) < capacity else { return false }
            state[id, default: [:]][device] = Held(deckVersion: -1, released: 0)
            return true
        }
        if changed { changes.add(1, ordering: .releasing) }
    }

    /// Of the devices seen on session `id`, how many hold slide `slide`'s key of `deckVersion` (none when
    /// `slide` is nil), and how many there are.
    public func count(session id: String, deckVersion: Int, slide: Int?) -> (holding: Int, devices: Int) {
        state.withLock { state in
            guard let devices = state[id] else { return (0, 0) }
            guard let slide else { return (0, devices.count) }
            let holding = devices.values.reduce(0) { $0 + ($1.deckVersion == deckVersion && $1.released > slide ? 1 : 0) }
            return (holding, devices.count)
        }
    }

    /// Forgets devices (revoked): they count neither as holding nor among the devices.
    public func forget(devices: Set<String>) {
        guard !devices.isEmpty else { return }
        let changed: Bool = state.withLock { state in
            var removed = false
            for key in Array(state.keys) {
                let before = state[key]?.count ?? 0
                state[key] = state[key]?.filter { !devices.contains($0.key) }
                removed = removed || (state[key]?.count ?? 0) != before
            }
            return removed
        }
        if changed { changes.add(1, ordering: .releasing) }
    }
}
