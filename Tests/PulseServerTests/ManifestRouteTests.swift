import Foundation
import PulseCore
import PulseCrypto
import PulseTestSupport
import Testing
@testable import PulseServer
@testable import PulseServerStorage

/// `GET /api/sync/manifest?session=` and `GET /api/sync/series/{id}/manifest`: ETags, 304s, scope, and
/// timeline-gated resources turning into full entries.
@Suite struct ManifestRouteTests {
    /// A package (written by hand, as docs/package-format.md says) with a gated session in a series.
    static func harness(_ name: String = #function) throws -> (SyncHarness, talkVersion: String) {
        let harness = try SyncHarness(name, configure: { $0.deviceLimit = RateLimit(rate: 1000, burst: 1000) })
        let package = try TestPackage(packageId: TestContent.packageAID, name)
        let (version, _) = try package.addSession("talk", slides: 8, gated: [
            .init(id: "solutions", releaseAfterSlide: 3),
            .init(id: "survey", releaseAt: "2027-01-15T09:00:00Z"),  // the test clock starts an hour before
        ], series: "conf")
        try package.addSession("other", series: "conf")
        try package.addSession("elsewhere")
        try package.addSeries("conf", sessions: ["talk", "other"])
        try package.commit()
        let plan = try PackageReader(package: package.root, identities: []).read()
        _ = try harness.storage.importContent(plan, options: ImportOptions(), at: harness.clock.seconds)
        return (harness, version)
    }

    @Test func etagsAnd304s() throws {
        let (harness, version) = try Self.harness()
        let device = try harness.device(for: .session("talk"))
        let client = try harness.client()
        let target = "/api/sync/manifest?session=talk"
        let response = try client.signed("GET", target, by: device, at: harness.clock.seconds)
        #expect(response.status == 200)
        #expect(response.header("etag") == "\"\(version)\"")
        #expect(response.header("cache-control") == "private, no-cache")
        #expect(response.header("content-type") == "application/json")
        #expect(response.json?["packageVersion"]?.stringValue == version)
        #expect(PackageVersion.of(try #require(response.json)) == version)
        for condition in ["\"\(version)\"", "W/\"\(version)\"", "\"other\", \"\(version)\"", "*"] {
            let again = try client.signed("GET", target, by: device, at: harness.clock.seconds, headers: [("If-None-Match", condition)])
            #expect(again.status == 304 && again.body.isEmpty, "\(condition)")
            #expect(again.header("etag") == "\"\(version)\"" && again.header("cache-control") == "private, no-cache")
        }
        for condition in ["\"other\"", "\(version)", "\"\(version.dropLast())\""] {
            #expect(try client.signed("GET", target, by: device, at: harness.clock.seconds, headers: [("If-None-Match", condition)]).status == 200)
        }
        // HEAD: the headers alone.
        let head = try client.signed("HEAD", target, by: device, at: harness.clock.seconds)
        #expect(head.status == 200 && head.header("etag") == "\"\(version)\"")
    }

    @Test func aGatedResourceBecomesAFullEntryAndTheVersionChanges() throws {
        let (harness, version) = try Self.harness()
        let device = try harness.device(for: .series("conf"))
        let client = try harness.client()
        func fetch(_ target: String) throws -> (etag: String, json: JSONValue) {
            let response = try client.signed("GET", target, by: device, at: harness.clock.seconds)
            #expect(response.status == 200, "\(target)")
            return (try #require(response.header("etag")), try #require(response.json))
        }
        func resource(_ json: JSONValue, _ id: String) -> JSONValue? { json["resources"]?.arrayValue?.first { $0["id"]?.stringValue == id } }
        let series0 = try fetch("/api/sync/series/conf/manifest")
        #expect(series0.json["sessions"]?.arrayValue?.first?["packageVersion"]?.stringValue == version)

        // Live, frontier 2: nothing released yet.
        _ = try harness.storage.updateSession(id: "talk", SessionUpdate(state: .live, maxShown: 2), at: harness.clock.seconds)
        let talk1 = try fetch("/api/sync/manifest?session=talk")
        #expect(talk1.etag == "\"\(version)\"" && resource(talk1.json, "solutions")?["gated"] == true)
        #expect(resource(talk1.json, "solutions")?["url"] == nil)

        // The frontier reaches slide 3: the full entry, a new packageVersion, a new series ETag.
        _ = try harness.storage.advance(sessionId: "talk", to: 3, at: harness.clock.seconds)
        let talk2 = try fetch("/api/sync/manifest?session=talk")
        #expect(talk2.etag != talk1.etag)
        #expect(resource(talk2.json, "solutions") == ["id": "solutions", "title": "Resource solutions", "kind": "link", "gated": false, "url": "https://example.org/solutions"])
        #expect(resource(talk2.json, "survey")?["gated"] == true)
        let newVersion = try #require(talk2.json["packageVersion"]?.stringValue)
        #expect(talk2.etag == "\"\(newVersion)\"" && PackageVersion.of(talk2.json) == newVersion)
        let series1 = try fetch("/api/sync/series/conf/manifest")
        #expect(series1.etag != series0.etag)
        #expect(series1.json["sessions"]?.arrayValue?.first?["packageVersion"]?.stringValue == newVersion)
        #expect(PackageVersion.of(series1.json) == series1.json["packageVersion"]?.stringValue)

        // The server's clock reaches the survey's releaseAt.
        harness.clock.advance(by: 3600)
        let talk3 = try fetch("/api/sync/manifest?session=talk")
        #expect(talk3.etag != talk2.etag && resource(talk3.json, "survey")?["gated"] == false)
        // A device holding the old version is told it changed.
        let stale = try client.signed("GET", "/api/sync/manifest?session=talk", by: device, at: harness.clock.seconds, headers: [("If-None-Match", talk2.etag)])
        #expect(stale.status == 200)
    }

    @Test func scopeDecidesWhatADeviceMayRead() throws {
        let (harness, _) = try Self.harness()
        let seriesDevice = try harness.device(for: .series("conf"))
        let sessionDevice = try harness.device(for: .session("talk"))
        let client = try harness.client()
        let now = harness.clock.seconds
        #expect(try client.signed("GET", "/api/sync/manifest?session=talk", by: seriesDevice, at: now).status == 200)
        #expect(try client.signed("GET", "/api/sync/manifest?session=other", by: seriesDevice, at: now).status == 200)
        #expect(try client.signed("GET", "/api/sync/manifest?session=elsewhere", by: seriesDevice, at: now).status == 404)
        #expect(try client.signed("GET", "/api/sync/series/conf/manifest", by: seriesDevice, at: now).status == 200)
        #expect(try client.signed("GET", "/api/sync/series/nope/manifest", by: seriesDevice, at: now).status == 404)
        #expect(try client.signed("GET", "/api/sync/manifest?session=talk", by: sessionDevice, at: now).status == 200)
        #expect(try client.signed("GET", "/api/sync/manifest?session=other", by: sessionDevice, at: now).status == 404)
        #expect(try client.signed("GET", "/api/sync/series/conf/manifest", by: sessionDevice, at: now).status == 404)
    }
}
