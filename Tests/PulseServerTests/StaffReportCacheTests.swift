import Foundation
import PulseCore
import PulseCrypto
import PulseSQLite
import PulseSystem
import PulseTestSupport
import Synchronization
import Testing
@testable import PulseServer
@testable import PulseServerStorage
@testable import PulseStaffAPI
@testable import PulseSyncAPI

/// `GET /api/staff/sessions/{id}/report` reads every sample of the session: a moderator's token asking in a loop
/// must not make the server do that each time. The report is kept (`ReportCache`, the one the console's report
/// page reads too): while nothing changed, and while the session is live for `liveSeconds` even if samples
/// arrived; a burst of requests, JSON and CSV at once, makes it once.
@Suite struct StaffReportCacheTests {
    static func seeded() throws -> (SyncHarness, auth: [(String, String)], devices: [TestDevice]) {
        let harness = try SyncHarness(configure: { $0.deviceLimit = RateLimit(rate: 1000, burst: 1000) })
        try harness.seed(["talk"], state: .live)
        var devices: [TestDevice] = []
        for index in 0..<3 {
            let device = try harness.enroll(try harness.code(.session("talk")), name: "Phone \(index)")
            try post(harness, device, rtt: 20 + index)
            devices.append(device)
        }
        // A room's worth of samples (30,000 from these devices over the last hour), so that making the report takes
        // long enough for the burst's requests to arrive while it is being made.
        try Database(path: harness.data.databasePath).execute("""
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000)
            INSERT INTO diag_samples (session_id, device_id, received_at, build, platform, connection)
            SELECT 'talk', d.id, \(harness.clock.seconds - 3600) + i % 3600, '1.0', 'ios', '{"online":true,"rttMs":40}'
            FROM n JOIN (SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM devices) d ON d.k = n.i % 3
            """)
        let moderator = try harness.administration.createStaffToken(role: .moderator).text
        return (harness, [("Authorization", "Bearer \(moderator)")], devices)
    }

    static func post(_ harness: SyncHarness, _ device: TestDevice, rtt: Int) throws {
        let body = JSONValue.object(["build": "1.0", "platform": "ios", "online": true, "rttMs": .int(rtt)]).canonicalBytes
        let status = try harness.client().signed("POST", "/api/sessions/talk/diag", by: device, at: harness.clock.seconds, body: body).status
        guard status == 204 else { throw RawHTTPConnection.Failure("diag answered \(status)") }
    }

    @Test func aBurstOfReportRequestsMakesTheReportOnce() throws {
        let (harness, auth, devices) = try Self.seeded()
        let reports = harness.sync.staff.reports
        // 24 requests at once from 8 clients, JSON and CSV, as a script with a moderator's token would send them.
        let answers = Mutex<[(csv: Bool, status: Int, body: [UInt8])]>([])
        DispatchQueue.concurrentPerform(iterations: 24) { index in
            let csv = index % 3 == 0
            let response = try? harness.client().request("GET", "/api/staff/sessions/talk/report" + (csv ? "?format=csv" : ""), auth)
            answers.withLock { $0.append((csv, response?.status ?? 0, response?.body ?? [])) }
        }
        let all = answers.withLock { $0 }
        #expect(all.count == 24 && all.allSatisfy { $0.status == 200 }, "\(all.map(\.status))")
        #expect(reports.made == 1, "the report was made \(reports.made) times for one burst")
        #expect(Set(all.filter { !$0.csv }.map(\.body)).count == 1 && Set(all.filter(\.csv).map(\.body)).count == 1)
        let json = try JSONValue.parse(try #require(all.first { !$0.csv }?.body))
        #expect(json["samples"] == 30_003 && json["devices"] == 3)

        // Live, a sample arrives: for the next 5 seconds the report is the kept one (it says when it was made).
        try Self.post(harness, devices[0], rtt: 99)
        for _ in 0..<10 {
            let again = try harness.client().request("GET", "/api/staff/sessions/talk/report", auth)
            #expect(again.status == 200 && again.json?["samples"] == 30_003)
        }
        #expect(reports.made == 1)
        harness.clock.advance(by: 5)
        #expect(try harness.client().request("GET", "/api/staff/sessions/talk/report", auth).json?["samples"] == 30_004)
        #expect(reports.made == 2)
        // Ended: a new sample shows at once (the state changed, then the samples did).
        _ = try harness.storage.updateSession(id: "talk", SessionUpdate(state: .ended), at: harness.clock.seconds, audit: [])
        #expect(try harness.client().request("GET", "/api/staff/sessions/talk/report", auth).json?["state"] == "ended")
        #expect(reports.made == 3)
        #expect(try harness.client().request("GET", "/api/staff/sessions/talk/report?format=csv", auth).status == 200)
        #expect(reports.made == 3)
    }

    /// The cache's rule: the same key always; a newer sample stamp only for a live session, the same change
    /// sequence, within `liveSeconds`; the forms made of a kept report are made once.
    @Test func theCacheKeepsALiveReportForLiveSeconds() throws {
        let cache = ReportCache(liveSeconds: 5)
        let session = SessionRecord(
            id: "keynote", state: .live, maxShown: nil, rehearsalMaxShown: nil, allowDownload: false, venueNetworks: [],
            packageId: TestContent.packageAID, seriesId: nil, packageVersion: "v", deckVersion: 1, slideCount: 3, changeSequence: 3, updatedAt: 0)
        let key = ReportCache.Key(stamp: SampleStamp(count: 1, newest: 10), changeSequence: 3)
        let newer = ReportCache.Key(stamp: SampleStamp(count: 2, newest: 11), changeSequence: 3)
        let kept = ReportCache.Kept(report: StaffReport(session: session, samples: [], devices: [], generatedAt: 100), key: key, madeAt: 100)
        cache.keep(kept, session: "keynote")
        #expect(cache.kept(session: "keynote", key: key, live: false, now: 10_000) === kept)
        #expect(cache.kept(session: "keynote", key: newer, live: true, now: 104.9) === kept)
        #expect(cache.kept(session: "keynote", key: newer, live: true, now: 105) == nil)
        #expect(cache.kept(session: "keynote", key: newer, live: false, now: 101) == nil)
        #expect(cache.kept(session: "keynote", key: ReportCache.Key(stamp: newer.stamp, changeSequence: 4), live: true, now: 101) == nil)
        #expect(cache.kept(session: "other", key: key, live: true, now: 101) == nil)
        let made = Mutex(0)
        for _ in 0..<3 { #expect(kept.form("csv") { made.withLock { $0 += 1 }; return "a,b" } == "a,b") }
        #expect(made.withLock { $0 } == 1)
        // Bounded: past its capacity the oldest session's report goes.
        let small = ReportCache(capacity: 2)
        for id in ["a", "b", "c"] { small.keep(kept, session: id) }
        #expect(small.kept(session: "a", key: key, live: false, now: 100) == nil && small.kept(session: "c", key: key, live: false, now: 100) != nil)
    }
}
