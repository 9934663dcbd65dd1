import PulseServerStorage
import Synchronization

/// The report pages made last, per session, kept while the session's samples and state are what they were
/// (`SampleStamp` and the change sequence): a report of 10,000 devices is made once after the event, not on
/// every look. While the session is live, samples arrive all the time: a report is then kept for
/// `liveSeconds` even if samples arrived since (its page says when it was made), so a room of 10,000 costs
/// one report every few seconds, not one per look. Bounded: past `capacity` sessions the oldest entry goes.
final class ReportCache: Sendable {
    struct Key: Equatable, Sendable {
        let stamp: SampleStamp
        let changeSequence: Int64
    }

    private struct Entry: Sendable {
        let key: Key
        let view: PageView
        /// When it was made (the server's clock, seconds).
        let madeAt: Double
    }

    private let entries = Mutex<[(session: String, entry: Entry)]>([])
    let capacity: Int

    /// How long a live session's report is kept while new samples arrive.
    let liveSeconds: Double

    init(capacity: Int = 16, liveSeconds: Double = 5) {
        self.capacity = capacity
        self.liveSeconds = liveSeconds
    }

    /// The page kept for `session` under `key`; for a `live` session also one made under an older sample stamp
    /// (the same change sequence: state and frontier as they are) less than `liveSeconds` before `now`; else nil.
    func view(session: String, key: Key, live: Bool, now: Double) -> PageView? {
        entries.withLock { entries in
            guard let entry = entries.first(where: { $0.session == session })?.entry else { return nil }
            if entry.key == key { return entry.view }
            let fresh = live && entry.key.changeSequence == key.changeSequence && now - entry.madeAt < liveSeconds && now >= entry.madeAt
            return fresh ? entry.view : nil
        }
    }

    /// Keeps `view` for `session` under `key`, made at `now`, in place of what was kept for it.
    func keep(_ view: PageView, session: String, key: Key, now: Double) {
        entries.withLock { entries in
            entries.removeAll { $0.session == session }
            if entries.count >= capacity { entries.removeFirst() }
            entries.append((session, Entry(key: key, view: view, madeAt: now)))
        }
    }
}
