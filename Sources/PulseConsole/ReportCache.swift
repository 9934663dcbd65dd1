import PulseServerStorage
import Synchronization

/// The report pages made last, per session, kept while the session's samples and state are what they were
/// (`SampleStamp` and the change sequence): a report of 10,000 devices is made once after the event, not on
/// every look. Bounded: past `capacity` sessions the oldest entry goes.
final class ReportCache: Sendable {
    struct Key: Equatable, Sendable {
        let stamp: SampleStamp
        let changeSequence: Int64
    }

    private struct Entry: Sendable {
        let key: Key
        let view: PageView
    }

    private let entries = Mutex<[(session: String, entry: Entry)]>([])
    let capacity: Int

    init(capacity: Int = 16) { self.capacity = capacity }

    /// The page kept for `session` under `key`, or nil.
    func view(session: String, key: Key) -> PageView? {
        entries.withLock { entries in entries.first { $0.session == session && $0.entry.key == key }?.entry.view }
    }

    /// Keeps `view` for `session` under `key`, in place of what was kept for it.
    func keep(_ view: PageView, session: String, key: Key) {
        entries.withLock { entries in
            entries.removeAll { $0.session == session }
            if entries.count >= capacity { entries.removeFirst() }
            entries.append((session, Entry(key: key, view: view)))
        }
    }
}
