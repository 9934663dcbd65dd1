import Foundation
import PulseCore
import PulseServer
import PulseServerStorage
import PulseSyncAPI
import Testing

@Suite struct ManifestViewTests {
    static func content() throws -> (SessionContent, SessionRecord) {
        let gated = [
            GatedResource(id: "solutions", rule: GateRule(releaseAfterSlide: 2),
                          entry: ["id": "solutions", "title": "Solutions", "kind": "link", "gated": false, "url": "https://example.org/s"]),
            GatedResource(id: "survey", rule: GateRule(releaseAt: 5000), entry: ["id": "survey", "title": "Survey", "kind": "link", "gated": false, "url": "https://example.org/v"]),
        ]
        let (manifest, version) = PackageVersion.stamped([
            "session": ["id": "talk"],
            "resources": [
                ["id": "wifi", "title": "Wi-Fi", "kind": "note", "gated": false, "body": "pw"],
                ["id": "solutions", "title": "Solutions", "kind": "link", "gated": true],
                ["id": "survey", "title": "Survey", "kind": "link", "gated": true],
            ],
        ])
        let content = SessionContent(sessionId: "talk", packageVersion: version, manifest: manifest.prettyBytes, gated: gated)
        let session = SessionRecord(
            id: "talk", state: .live, maxShown: 1, rehearsalMaxShown: nil, allowDownload: false, venueNetworks: [], packageId: TestContent.packageAID, seriesId: nil,
            packageVersion: version, deckVersion: 1, slideCount: 5, changeSequence: 0, updatedAt: 0)
        return (content, session)
    }

    @Test func nothingReleasedServesTheImportedBytes() throws {
        let (content, session) = try Self.content()
        #expect(ManifestView.releasedResources(content, session: session, now: 4999).isEmpty)
        #expect(try ManifestView.session(content, released: []) == .init(body: content.manifest, packageVersion: content.packageVersion))
    }

    @Test func aReleasedResourceShowsItsFullEntryUnderANewVersion() throws {
        let (content, original) = try Self.content()
        var session = original
        session.maxShown = 2
        let released = ManifestView.releasedResources(content, session: session, now: 4999)
        #expect(released == ["solutions"])
        let view = try ManifestView.session(content, released: released)
        let manifest = try JSONValue.parse(Data(view.body))
        #expect(manifest["resources"]?.arrayValue?.map { $0["gated"] } == [false, false, true])
        #expect(manifest["resources"]?.arrayValue?[1]["url"] == "https://example.org/s")
        #expect(view.packageVersion != content.packageVersion)
        #expect(view.packageVersion == PackageVersion.of(manifest) && manifest["packageVersion"]?.stringValue == view.packageVersion)
        // The clock releases the other one; both released is yet another version.
        let both = try ManifestView.session(content, released: ManifestView.releasedResources(content, session: session, now: 5000))
        #expect(both.packageVersion != view.packageVersion)
    }

    @Test func seriesRefsCarryTheVisibleVersions() throws {
        let (manifest, version) = PackageVersion.stamped([
            "series": ["id": "conf"], "sessions": [["id": "talk", "title": "T", "packageVersion": "v1"], ["id": "lab", "title": "L", "packageVersion": "w1"]],
        ])
        let record = SeriesRecord(id: "conf", packageId: TestContent.packageAID, packageVersion: version, manifest: manifest.prettyBytes, sessionIds: ["talk", "lab"])
        #expect(try ManifestView.series(record, visibleVersions: ["talk": "v1", "lab": "w1"]) == .init(body: record.manifest, packageVersion: version))
        let changed = try ManifestView.series(record, visibleVersions: ["talk": "v2", "lab": "w1"])
        let parsed = try JSONValue.parse(Data(changed.body))
        #expect(parsed["sessions"]?.arrayValue?.map { $0["packageVersion"] } == ["v2", "w1"])
        #expect(changed.packageVersion == PackageVersion.of(parsed) && changed.packageVersion != version)
    }
}
