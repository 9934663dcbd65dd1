import Foundation
import PulseCore
import PulseServer
import PulseServerStorage
import Testing

/// Imports, content reads, signed-request replay keys and diagnostics, run against every backend.
@Suite struct StorageSuiteContentTests {
    typealias T = TestContent

    @Test(arguments: StorageBackend.all)
    func importStoresContentAndKeysAndSecondImportIsANoOp(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        let talk = T.session("talk", series: "conf")
        let gated = GatedResource(id: "r1", rule: GateRule(releaseAfterSlide: 3, releaseAt: 5000), entry: ["id": "r1", "gated": false])
        let lab = T.session("lab", slides: 4, gated: [gated])
        let plan = T.plan([talk, lab], series: [T.series("conf", sessions: ["talk", "lab"])])
        let summary = try storage.importContent(plan, options: ImportOptions(), at: 1000)
        #expect(summary.sessions.map(\.outcome) == [.new(deckVersion: 1), .new(deckVersion: 1)])
        #expect(summary.series.map(\.outcome) == [.new])

        let record = try #require(try storage.session(id: "talk"))
        #expect(record.state == .draft && record.packageId == T.packageAID && record.seriesId == "conf" && record.slideCount == 10)
        #expect(try storage.sessionContent(id: "talk") == SessionContent(sessionId: "talk", packageVersion: talk.packageVersion, manifest: talk.manifest, gated: []))
        #expect(try storage.sessionContent(id: "lab")?.gated == [gated])
        #expect(try storage.keyTable(sessionId: "talk", deckVersion: 1) == talk.keyTable)
        #expect(try storage.keyTable(sessionId: "talk", deckVersion: 2) == nil)
        #expect(try storage.series(id: "conf")?.sessionIds == ["talk", "lab"])
        #expect(try storage.sessionContent(id: "nope") == nil && storage.series(id: "nope") == nil)

        let changesBefore = try storage.changes(sessionId: "talk", after: 0, limit: 100)
        let again = try storage.importContent(plan, options: ImportOptions(), at: 2000)
        #expect(again.isNoOp)
        #expect(try storage.changes(sessionId: "talk", after: 0, limit: 100) == changesBefore)
        #expect(try storage.session(id: "talk")?.updatedAt == 1000)
    }

    @Test(arguments: StorageBackend.all)
    func aNewerDeckBecomesCurrentAndKeepsStateAndFrontier(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        _ = try storage.importContent(T.plan([T.session("talk")]), options: ImportOptions(), at: 1000)
        _ = try storage.updateSession(id: "talk", SessionUpdate(state: .live, maxShown: 4), at: 1100)
        let v2 = T.session("talk", deckVersion: 2, slides: 12, seed: "new deck")
        let summary = try storage.importContent(T.plan([v2]), options: ImportOptions(), at: 1200)
        #expect(summary.sessions.map(\.outcome) == [.deck(from: 1, to: 2)])
        let record = try #require(try storage.session(id: "talk"))
        #expect(record.deckVersion == 2 && record.slideCount == 12 && record.packageVersion == v2.packageVersion)
        #expect(record.state == .live && record.maxShown == 4)
        #expect(try storage.keyTable(sessionId: "talk", deckVersion: 2) == v2.keyTable)
        #expect(try storage.keyTable(sessionId: "talk", deckVersion: 1) != nil)  // kept for devices on the old deck
        #expect(try storage.changes(sessionId: "talk", after: 0, limit: 100).last?.event == .content(packageVersion: v2.packageVersion, deckVersion: 2))

        // Same deck, new manifest: the manifest changes, the keys are the same.
        let edited = T.session("talk", deckVersion: 2, slides: 12, seed: "new deck", manifestNote: "agenda moved")
        #expect(try storage.importContent(T.plan([edited]), options: ImportOptions(), at: 1300).sessions.map(\.outcome) == [.manifest])
        #expect(try storage.sessionContent(id: "talk")?.packageVersion == edited.packageVersion)
    }

    @Test(arguments: StorageBackend.all)
    func otherKeysForAHeldDeckVersionAreRefusedAndNothingChanges(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        _ = try storage.importContent(T.plan([T.session("talk")]), options: ImportOptions(), at: 1000)
        // "aaa" is new and comes first: it must be rolled back with the refusal of "talk".
        let plan = T.plan([T.session("aaa"), T.session("talk", seed: "other keys", manifestNote: "x")])
        let error = #expect(throws: ServerError.self) { try storage.importContent(plan, options: ImportOptions(), at: 2000) }
        #expect(error?.kind == .conflict)
        #expect(error?.message == "session talk deckVersion 1: the server holds other keys for this deck version (from package \(T.packageA); this is package \(T.packageA)); nothing imported")
        #expect(try storage.session(id: "aaa") == nil)
        #expect(try storage.keyTable(sessionId: "talk", deckVersion: 1) == T.session("talk").keyTable)
        #expect(try storage.sessionContent(id: "talk")?.packageVersion == T.session("talk").packageVersion)
    }

    @Test(arguments: StorageBackend.all)
    func anotherPackageIsRefusedUnlessReplacing(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        _ = try storage.importContent(T.plan([T.session("talk")], series: [T.series("conf", sessions: ["talk"])]), options: ImportOptions(), at: 1000)
        _ = try storage.updateSession(id: "talk", SessionUpdate(state: .live, maxShown: 2), at: 1100)
        let other = T.plan([T.session("talk", packageId: T.packageBID, seed: "b")], series: [T.series("conf", sessions: ["talk"])], packageId: T.packageBID)
        let error = #expect(throws: ServerError.self) { try storage.importContent(other, options: ImportOptions(), at: 1200) }
        #expect(error?.message.hasPrefix("session talk was imported from package \(T.packageA), this is package \(T.packageB)") == true)
        #expect(try storage.session(id: "talk")?.packageId == T.packageAID)

        let replaced = try storage.importContent(other, options: ImportOptions(replacePackage: true), at: 1300)
        #expect(replaced.sessions.map(\.outcome) == [.manifest])
        let record = try #require(try storage.session(id: "talk"))
        #expect(record.packageId == T.packageBID && record.state == .live && record.maxShown == 2)
        #expect(try storage.keyTable(sessionId: "talk", deckVersion: 1)?.packageId == T.packageBID)
        #expect(try storage.series(id: "conf")?.packageId == T.packageBID)
    }

    @Test(arguments: StorageBackend.all)
    func anOlderDeckThanTheHeldOneIsRefused(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        _ = try storage.importContent(T.plan([T.session("talk", deckVersion: 3)]), options: ImportOptions(), at: 1000)
        let error = #expect(throws: ServerError.self) {
            try storage.importContent(T.plan([T.session("talk", deckVersion: 2)]), options: ImportOptions(), at: 1100)
        }
        #expect(error?.message.hasPrefix("session talk: the server holds deckVersion 3, this package has 2") == true)
    }

    @Test(arguments: StorageBackend.all)
    func aReplayedSignedRequestIsRefusedUntilItsKeyExpires(_ backend: StorageBackend) throws {
        let instance = try backend.make()
        let storage = instance.storage
        try TestContent.seed(storage, "talk")
        let device = try #require(try storage.enroll(
            credentialHash: try StorageSuiteEnrollTests.code(storage), device: StorageSuiteEnrollTests.device(1), at: 1000))
        let sample = DiagSample(sessionId: "talk", deviceId: device.id, receivedAt: 1000, build: "1.2.0", platform: "ios", connection: ["rttMs": 40])
        let key = Array(repeating: UInt8(7), count: 32)
        #expect(try storage.recordSignedRequest(replayKey: key, expiresAt: 1600, sample: sample, at: 1000))
        #expect(try !storage.recordSignedRequest(replayKey: key, expiresAt: 1601, sample: sample, at: 1001))
        #expect(try !instance.peer().recordSignedRequest(replayKey: key, expiresAt: 1601, sample: sample, at: 1599))
        #expect(try storage.samples(sessionId: "talk") == [sample])  // the replays stored nothing
        #expect(try storage.recordSignedRequest(replayKey: key, expiresAt: 2200, sample: nil, at: 1600))
        #expect(try storage.pruneReplayKeys(at: 2100) == 0)
        #expect(try storage.pruneReplayKeys(at: 2200) == 1)
    }

    @Test(arguments: StorageBackend.all)
    func theLiveViewShowsEachDevicesLatestSample(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        try TestContent.seed(storage, "talk")
        var devices: [DeviceRecord] = []
        for n in 1...2 {
            devices.append(try #require(try storage.enroll(
                credentialHash: try StorageSuiteEnrollTests.code(storage), device: StorageSuiteEnrollTests.device(n), at: 1000)))
        }
        func sample(_ device: Int, _ at: Int64, _ build: String) -> DiagSample {
            DiagSample(sessionId: "talk", deviceId: devices[device].id, receivedAt: at, build: build, platform: "android", connection: ["rttMs": .int(Int(at))])
        }
        let posted = [sample(0, 1000, "1.0"), sample(1, 1010, "2.0"), sample(0, 1050, "1.1"), sample(1, 1020, "2.1")]
        for (n, item) in posted.enumerated() {
            #expect(try storage.recordSignedRequest(replayKey: [UInt8(n)], expiresAt: 5000, sample: item, at: item.receivedAt))
        }
        #expect(try storage.samples(sessionId: "talk") == posted)
        #expect(try storage.latestSamples(sessionId: "talk", since: 1000) == [posted[2], posted[3]].sorted { $0.deviceId < $1.deviceId })
        #expect(try storage.latestSamples(sessionId: "talk", since: 1030) == [posted[2]])
        // The console's form: newest first, cut to a limit, with the room's count; and by device, of any session.
        #expect(try storage.latestSamples(sessionId: "talk", since: 1000, limit: 1) == ([posted[2]], 2))
        #expect(try storage.latestSamples(sessionId: "talk", since: 1000, limit: 5) == ([posted[2], posted[3]], 2))
        #expect(try storage.latestSamples(sessionId: "talk", since: 1100, limit: 5) == ([], 0))
        #expect(try storage.latestSamples(deviceIds: [devices[1].id, "no-such-device"]) == [devices[1].id: posted[3]])
        #expect(try storage.latestSamples(deviceIds: []) == [:])
        let stamp = try storage.sampleStamp(sessionId: "talk")
        #expect(stamp.count == 4 && stamp.newest > 0)
        #expect(try storage.sampleStamp(sessionId: "nothing") == SampleStamp(count: 0, newest: 0))
    }

    /// The console's devices page: a page of the newest enrolments, a search over name, platform, id and scope,
    /// and the count of all that match; a search is a substring, never a pattern; a scoped staff token's
    /// scopes narrow it.
    @Test(arguments: StorageBackend.all)
    func devicesComeInPagesNewestFirstAndBySearch(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        try TestContent.seed(storage, "talk")
        var devices: [DeviceRecord] = []
        for n in 1...5 {
            let new = StorageSuiteEnrollTests.device(n)
            let named = NewDevice(id: new.id, publicKey: new.publicKey, platform: n == 5 ? "Android" : "ios", name: n == 3 ? "Ada's 100%_phone" : "Phone \(n)")
            let scope: DeviceScope = n == 4 ? .series("conf") : .session("talk")
            devices.append(try #require(try storage.enroll(credentialHash: try StorageSuiteEnrollTests.code(storage, scope: scope), device: named, at: 1000 + Int64(n))))
        }
        let all = try storage.devices(matching: "", scopes: nil, offset: 0, limit: 2)
        #expect(all.total == 5 && all.devices.map(\.id) == [devices[4].id, devices[3].id])
        #expect(try storage.devices(matching: "", scopes: nil, offset: 4, limit: 2).devices.map(\.id) == [devices[0].id])
        #expect(try storage.devices(matching: "", scopes: nil, offset: 9, limit: 2) == ([], 5))
        #expect(try storage.devices(matching: "android", scopes: nil, offset: 0, limit: 10).devices.map(\.id) == [devices[4].id])
        #expect(try storage.devices(matching: "ada's", scopes: nil, offset: 0, limit: 10).devices.map(\.id) == [devices[2].id])
        #expect(try storage.devices(matching: "%_", scopes: nil, offset: 0, limit: 10).devices.map(\.id) == [devices[2].id])
        #expect(try storage.devices(matching: "talk", scopes: nil, offset: 0, limit: 10).total == 4)  // the scope's id
        #expect(try storage.devices(matching: String(devices[1].id.suffix(6)), scopes: nil, offset: 0, limit: 10).devices.map(\.id) == [devices[1].id])
        #expect(try storage.devices(matching: "nobody", scopes: nil, offset: 0, limit: 10) == ([], 0))
        // A moderator of one session: its own devices and its series', never another's.
        #expect(try storage.devices(matching: "", scopes: [.series("conf")], offset: 0, limit: 10) == ([devices[3]], 1))
        let talk = try storage.devices(matching: "", scopes: [.session("talk")], offset: 0, limit: 2)
        #expect(talk.total == 4 && talk.devices.map(\.id) == [devices[4].id, devices[2].id])
        #expect(try storage.devices(matching: "phone 4", scopes: [.session("talk")], offset: 0, limit: 10) == ([], 0))
        #expect(try storage.devices(matching: "", scopes: [.session("talk"), .series("conf")], offset: 0, limit: 10).total == 5)
        #expect(try storage.devices(matching: "", scopes: [.session("other"), .series("talk")], offset: 0, limit: 10) == ([], 0))
        #expect(try storage.devices(matching: "", scopes: [], offset: 0, limit: 10) == ([], 0))
        #expect(Set(try storage.devices(ids: [devices[0].id, devices[3].id, "unknown"]).map(\.id)) == [devices[0].id, devices[3].id])
        #expect(try storage.devices(ids: []).isEmpty)
    }
}
