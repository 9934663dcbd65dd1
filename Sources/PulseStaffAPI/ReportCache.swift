import PulseServerStorage
import PulseSystem
import Synchronization

/// The end-of-event reports made last, per session: the one keeping of the staff API's report (JSON and CSV,
/// `GET /api/staff/sessions/{id}/report`) and the console's report page, which reads the same `Kept`. Making a
/// report reads every sample of the session (167 ms for 10,000 devices on a loaded machine), so it is made once
/// and kept while the session's samples and state are what they were (`SampleStamp` and the change sequence).
/// While the session is live or in rehearsal, samples arrive all the time: a report is then kept for
/// `liveSeconds` even if samples arrived since (it says when it was made: `generatedAt`, the page's "As of"), so
/// a room of 10,000 costs one report every few seconds however often staff (or a script with a moderator's
/// token) ask; a request within the window costs the stamp's lookup.
///
/// One report of a session is made at a time: a request that finds it being made waits for it instead of making
/// another, so a burst of requests makes it once. Bounded: past `capacity` sessions the oldest entry goes.
public final class ReportCache: Sendable {
    /// What a kept report was made from.
    public struct Key: Equatable, Sendable {
        public let stamp: SampleStamp
        public let changeSequence: Int64

        public init(stamp: SampleStamp, changeSequence: Int64) {
            self.stamp = stamp
            self.changeSequence = changeSequence
        }
    }

    /// A report as kept, with the forms made of it (the JSON and CSV bodies, the console's page): each made on
    /// its first ask and kept with the report, so they go when it goes.
    public final class Kept: Sendable {
        public let report: StaffReport
        public let key: Key
        /// When it was made (the server's clock, seconds).
        public let madeAt: Double
        private let forms = Mutex<[String: any Sendable]>([:])

        init(report: StaffReport, key: Key, madeAt: Double) {
            self.report = report
            self.key = key
            self.madeAt = madeAt
        }

        /// The form `name` of this report: `make`'s value, made on the first ask (two at once may both make it;
        /// the same value).
        public func form<T: Sendable>(_ name: String, _ make: () throws -> T) rethrows -> T {
            if let kept = forms.withLock({ $0[name] }) as? T { return kept }
            let made = try make()
            forms.withLock { $0[name] = made }
            return made
        }
    }

    private struct State {
        var entries: [(session: String, kept: Kept)] = []
        /// Sessions whose report a thread is making now.
        var making: Set<String> = []
        var made = 0
    }

    private let state = Condition(State())
    let capacity: Int
    /// How long a live session's report is kept while new samples arrive.
    public let liveSeconds: Double

    public init(capacity: Int = 16, liveSeconds: Double = 5) {
        self.capacity = max(1, capacity)
        self.liveSeconds = liveSeconds
    }

    /// Reports made so far (each a read of every sample of a session): what the tests count.
    public var made: Int { state.withLock { $0.made } }

    /// Whether a session in `state` gets samples all the time, so its report is kept for `liveSeconds` anyway.
    public static func isLive(_ state: SessionState) -> Bool { state == .live || state == .rehearsal }

    /// The report of `session` (read from storage just now), kept or made at `now` (the server's clock).
    public func report(of session: SessionRecord, storage: any ServerStorage, now: Double) throws -> Kept {
        let id = session.id
        let key = Key(stamp: try storage.sampleStamp(sessionId: id), changeSequence: session.changeSequence)
        let live = Self.isLive(session.state)
        // Another thread making this report: wait for it (not for ever: past 30 s this one makes its own).
        let found: Kept? = state.wait(until: { !$0.making.contains(id) }, timeout: 30) { state in
            if let kept = Self.lookup(state.entries, session: id, key: key, live: live, now: now, liveSeconds: liveSeconds) { return kept }
            state.making.insert(id)
            return nil
        }
        if let found { return found }
        defer { state.withLock(waking: .all) { _ = $0.making.remove(id) } }
        let samples = try storage.samples(sessionId: id)
        // The names of the devices that sent samples, not of every device of the event.
        let devices = try storage.devices(ids: Array(Set(samples.map(\.deviceId))))
        let kept = Kept(report: StaffReport(session: session, samples: samples, devices: devices, generatedAt: Int64(now.rounded(.down))), key: key, madeAt: now)
        keep(kept, session: id)
        return kept
    }

    /// Keeps `kept` for `session`, in place of what was kept for it.
    func keep(_ kept: Kept, session: String) {
        state.withLock { state in
            state.made += 1
            state.entries.removeAll { $0.session == session }
            if state.entries.count >= capacity { state.entries.removeFirst() }
            state.entries.append((session, kept))
        }
    }

    /// The report kept for `session` under `key`; for a `live` session also one made under an older sample stamp
    /// (the same change sequence: state and frontier as they are) less than `liveSeconds` before `now`; else nil.
    func kept(session: String, key: Key, live: Bool, now: Double) -> Kept? {
        state.withLock { Self.lookup($0.entries, session: session, key: key, live: live, now: now, liveSeconds: liveSeconds) }
    }

    private static func lookup(
        _ entries: [(session: String, kept: Kept)], session: String, key: Key, live: Bool, now: Double, liveSeconds: Double
    ) -> Kept? {
        guard let kept = entries.first(where: { $0.session == session })?.kept else { return nil }
        if kept.key == key { return kept }
        let fresh = live && kept.key.changeSequence == key.changeSequence && now - kept.madeAt < liveSeconds && now >= kept.madeAt
        return fresh ? kept : nil
    }
}
