import Foundation
import PulseCore
import PulseCrypto
import PulsePostgresTesting
import PulseSystem
import PulseTestSupport
import SyncTestSupport
import Testing

/// The families no single request shows, on the real executable: open streams, live advances and their
/// delivery latency, the write queue, and with PostgreSQL the storage errors and reconnects.
@Suite(.serialized) struct MetricsLiveTests {
    @Test func anAdvanceReachingAStreamIsCountedWithItsLatency() throws {
        let folder = try TestFolder()
        let (data, _, code) = try MetricsServeTests.event(in: folder)
        let staff = try #require(CLI.run(["admin", "staff-token", "create", "--data", data]).out.first)
        let server = try MetricsProcess("pulse-server", ["serve", "--data", data, "--access-log", "off"])
        let device = try MetricsServeTests.enroll(server, code: code)
        let auth = [("Authorization", "Bearer \(staff)")]
        #expect(try server.client().request("POST", "/api/staff/sessions/keynote", auth, body: Array(#"{"state":"live"}"#.utf8)).status == 200)

        let target = "/api/sync/events?session=keynote"
        let stream = try server.client()
        try stream.send("GET \(target) HTTP/1.1\r\nHost: x\r\nX-Pulse-Device: \(try device.header("GET", target, at: MetricsServeTests.now()))\r\n\r\n")
        #expect(try stream.readHead().status == 200)
        _ = try stream.readChunk()
        var text = String(decoding: try server.scrape().body, as: UTF8.self)
        #expect(Scrape.value(text, "pulse_event_streams_open") == 1)
        #expect(Scrape.value(text, "pulse_advances_total") == 0)

        let started = Date()
        #expect(try server.client().request("POST", "/api/staff/sessions/keynote/advance", auth, body: Array(#"{"maxShown":2}"#.utf8)).status == 200)
        let event = String(decoding: try #require(try stream.readChunk()), as: UTF8.self)
        let waited = Date().timeIntervalSince(started)
        #expect(event.contains("event: advance"))
        #expect(eventually(within: 5) {
            text = String(decoding: (try? server.scrape().body) ?? [], as: UTF8.self)
            return Scrape.value(text, "pulse_advance_delivery_seconds_count") == 1
        }, "\(text)")
        #expect(Scrape.value(text, "pulse_advances_total") == 1)
        // Measured from the staff route's commit: never more than the whole round trip seen here (not from the
        // change's whole-second timestamp, which could be up to a second earlier).
        let latency = try #require(Scrape.value(text, "pulse_advance_delivery_seconds_sum"))
        #expect(latency >= 0 && latency <= waited, "\(latency) s against \(waited) s")
        #expect(Scrape.value(text, #"pulse_http_requests_total{route="/api/staff/sessions/:id/advance",status="2xx"}"#) == 1)
        #expect((Scrape.value(text, "pulse_write_duration_seconds_count") ?? 0) >= 3)  // enroll, state, advance
        #expect(Scrape.value(text, "pulse_write_queue_depth") == 0)
    }

    @Test func withPostgreSQLStorageErrorsAndReconnectsAreCounted() throws {
        let cluster = try PostgresCluster()  // its own: stopping the shared one would fail other tests
        defer { cluster.destroy() }
        let database = try cluster.createDatabase("metrics")
        let folder = try TestFolder()
        let package = try ServeProcessTests.samplePackage(in: folder)
        #expect(CLI.run(["import", "--database", database.url, package.path]).code == 0)
        let code = try #require(CLI.run(["admin", "device-code", "create", "--database", database.url, "--series", "devconf-2026"]).out.first)
        let server = try MetricsProcess("pulse-server", ["serve", "--database", database.url, "--access-log", "off"])
        let device = try MetricsServeTests.enroll(server, code: code)
        var text = String(decoding: try server.scrape().body, as: UTF8.self)
        #expect(Scrape.value(text, #"pulse_storage_reconnects_total{connection="pool"}"#) == 0)
        #expect(Scrape.value(text, #"pulse_storage_reconnects_total{connection="listener"}"#) == 0)
        #expect(!text.contains(database.url) && !text.contains(cluster.applicationPassword))

        try cluster.stop()
        #expect(eventually(within: 20) {
            (try? server.client().signed("GET", "/api/sync/keys?session=keynote", by: device, at: MetricsServeTests.now()).status) == 503
        })
        try cluster.start()
        #expect(eventually(within: 30) {
            (try? server.client().signed("GET", "/api/sync/keys?session=keynote", by: device, at: MetricsServeTests.now()).status) == 200
        })
        // A 200 can come from the cache before a pooled connection is made again: keep asking (each answer may
        // need the pool) until both the listener and the pool have reconnected.
        #expect(eventually(within: 20) {
            _ = try? server.client().signed("GET", "/api/sync/keys?session=keynote", by: device, at: MetricsServeTests.now())
            text = String(decoding: (try? server.scrape().body) ?? [], as: UTF8.self)
            return (Scrape.value(text, #"pulse_storage_reconnects_total{connection="listener"}"#) ?? 0) >= 1
                && (Scrape.value(text, #"pulse_storage_reconnects_total{connection="pool"}"#) ?? 0) >= 1
        }, "\(text)")
        #expect((Scrape.value(text, #"pulse_storage_errors_total{kind="unavailable"}"#) ?? 0) >= 1)
        #expect((Scrape.value(text, #"pulse_sync_refusals_total{reason="unavailable"}"#) ?? 0) >= 1)
        let (status, output) = try Scrape.promtool(try server.scrape().body)
        #expect(status == 0 && output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(output)")
    }
}
