import Foundation
import PulseServer
import PulseServerStorage
import Testing

/// Session state, frontiers and the change log, run against every storage backend.
@Suite struct StorageSuiteSessionTests {
    @Test(arguments: StorageBackend.all)
    func advancesMoveTheFrontierOfTheCurrentStateOnly(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        let fresh = try TestContent.seed(storage, "talk")[0]
        #expect(fresh.state == .draft && fresh.maxShown == nil && fresh.rehearsalMaxShown == nil)
        #expect(try storage.advance(sessionId: "talk", to: 3, at: 1100) == .refused(.draft))
        #expect(try storage.advance(sessionId: "nope", to: 3, at: 1100) == .noSuchSession)

        _ = try storage.updateSession(id: "talk", SessionUpdate(state: .rehearsal), at: 1100)
        guard case let .advanced(rehearsed, moved) = try storage.advance(sessionId: "talk", to: 7, at: 1101) else { Issue.record(); return }
        #expect(moved && rehearsed.rehearsalMaxShown == 7 && rehearsed.maxShown == nil)

        // Going live: the rehearsal frontier does not carry over.
        let live = try #require(try storage.updateSession(id: "talk", SessionUpdate(state: .live), at: 1102))
        #expect(live.maxShown == nil && live.rehearsalMaxShown == 7)
        guard case let .advanced(first, _) = try storage.advance(sessionId: "talk", to: 2, at: 1103) else { Issue.record(); return }
        #expect(first.maxShown == 2)
        // Behind the frontier: nothing moves.
        guard case let .advanced(back, movedBack) = try storage.advance(sessionId: "talk", to: 1, at: 1104) else { Issue.record(); return }
        #expect(!movedBack && back.maxShown == 2)
        // Past the deck (10 slides): clamped to the last slide.
        guard case let .advanced(far, _) = try storage.advance(sessionId: "talk", to: 99, at: 1105) else { Issue.record(); return }
        #expect(far.maxShown == 9)

        // Back to draft does not lower the frontier; ended refuses advances.
        #expect(try storage.updateSession(id: "talk", SessionUpdate(state: .draft), at: 1106)?.maxShown == 9)
        _ = try storage.updateSession(id: "talk", SessionUpdate(state: .ended), at: 1107)
        #expect(try storage.advance(sessionId: "talk", to: 5, at: 1108) == .refused(.ended))
    }

    @Test(arguments: StorageBackend.all)
    func maxShownFromTheOperatorOnlyGrows(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        try TestContent.seed(storage, "talk")
        #expect(try storage.updateSession(id: "talk", SessionUpdate(maxShown: 4), at: 1100)?.maxShown == 4)
        #expect(try storage.updateSession(id: "talk", SessionUpdate(maxShown: 2), at: 1101)?.maxShown == 4)
        #expect(try storage.updateSession(id: "talk", SessionUpdate(maxShown: 0), at: 1102)?.maxShown == 4)
        #expect(throws: ServerError.self) { try storage.updateSession(id: "talk", SessionUpdate(maxShown: -1), at: 1103) }
        #expect(try storage.updateSession(id: "nope", SessionUpdate(maxShown: 1), at: 1103) == nil)
    }

    @Test(arguments: StorageBackend.all)
    func settingsAreStoredAndVenueNetworksReplaced(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        try TestContent.seed(storage, "talk")
        let networks = [try IPNetwork(parsing: "10.20.0.0/16"), try IPNetwork(parsing: "2001:db8::/32")]
        let locked = try #require(try storage.updateSession(id: "talk", SessionUpdate(allowDownload: true, venueNetworks: networks), at: 1100))
        #expect(locked.allowDownload && Set(locked.venueNetworks) == Set(networks))
        let unlocked = try #require(try storage.updateSession(id: "talk", SessionUpdate(venueNetworks: []), at: 1101))
        #expect(unlocked.venueNetworks.isEmpty && unlocked.allowDownload)
    }

    @Test(arguments: StorageBackend.all)
    func theChangeLogNumbersEveryChangeAndResumes(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        try TestContent.seed(storage, "talk")  // sequence 1: content
        _ = try storage.updateSession(id: "talk", SessionUpdate(state: .rehearsal), at: 1100)  // 2
        _ = try storage.advance(sessionId: "talk", to: 3, at: 1101)  // 3
        _ = try storage.updateSession(id: "talk", SessionUpdate(state: .live), at: 1102)  // 4
        _ = try storage.advance(sessionId: "talk", to: 1, at: 1103)  // 5
        _ = try storage.advance(sessionId: "talk", to: 1, at: 1104)  // nothing moved: no entry
        _ = try storage.updateSession(id: "talk", SessionUpdate(state: .live, allowDownload: true), at: 1105)  // 6: settings only
        let all = try storage.changes(sessionId: "talk", after: 0, limit: 100)
        #expect(all.map(\.sequence) == [1, 2, 3, 4, 5, 6])
        #expect(all.map(\.event) == [
            .content(packageVersion: try storage.session(id: "talk")!.packageVersion, deckVersion: 1), .state(.rehearsal),
            .rehearsalAdvance(maxShown: 3, deckVersion: 1), .state(.live), .advance(maxShown: 1, deckVersion: 1), .settings,
        ])
        #expect(try storage.changes(sessionId: "talk", after: 4, limit: 100).map(\.sequence) == [5, 6])
        #expect(try storage.changes(sessionId: "talk", after: 0, limit: 2).map(\.sequence) == [1, 2])
        #expect(try storage.session(id: "talk")?.changeSequence == 6)
    }

    @Test(arguments: StorageBackend.all)
    func concurrentConflictingAdvancesEndAtTheMaxAndNeverGoBack(_ backend: StorageBackend) throws {
        let instance = try backend.make()
        _ = try instance.storage.importContent(TestContent.plan([TestContent.session("talk", slides: 200)]), options: ImportOptions(), at: 1000)
        _ = try instance.storage.updateSession(id: "talk", SessionUpdate(state: .live), at: 1000)
        let peer = try instance.peer()
        let slides = (0..<60).map { ($0 * 37) % 150 }  // a shuffled mix, highest 148
        let observer = Observer()
        let done = Counter()
        let failures = Counter()
        let watcherDone = DispatchSemaphore(value: 0)
        let watch = Thread {
            repeat {
                if let shown = try? peer.session(id: "talk")?.maxShown { observer.see(shown) }
            } while done.value == 0
            watcherDone.signal()
        }
        watch.start()
        DispatchQueue.concurrentPerform(iterations: slides.count) { index in
            do {
                let storage = index % 2 == 0 ? instance.storage : peer
                guard case .advanced = try storage.advance(sessionId: "talk", to: slides[index], at: 1100) else { failures.add(); return }
            } catch { failures.add() }
        }
        done.add()
        watcherDone.wait()
        #expect(failures.value == 0)
        #expect(observer.reads > 0)
        #expect(try instance.storage.session(id: "talk")?.maxShown == slides.max())
        #expect(observer.wentBack == false)
        // Every recorded advance is higher than the one before.
        let advances = try instance.storage.changes(sessionId: "talk", after: 0, limit: 1000).compactMap { change -> Int? in
            if case let .advance(shown, _) = change.event { return shown }
            return nil
        }
        #expect(advances == advances.sorted() && Set(advances).count == advances.count && advances.last == slides.max())
    }

    @Test(arguments: StorageBackend.all)
    func generationChangesWhenAnotherInstanceCommits(_ backend: StorageBackend) throws {
        let instance = try backend.make()
        try TestContent.seed(instance.storage, "talk")
        let peer = try instance.peer()
        let before = try instance.settledGeneration()
        #expect(try instance.storage.generation() == before)  // stable while nothing changes
        _ = try peer.advance(sessionId: "talk", to: 1, at: 1100)  // draft: refused, nothing changed
        #expect(try instance.settledGeneration() == before)
        _ = try peer.updateSession(id: "talk", SessionUpdate(state: .live), at: 1100)
        let afterPeer = try instance.settledGeneration()
        #expect(afterPeer != before)
        _ = try instance.storage.advance(sessionId: "talk", to: 1, at: 1101)
        #expect(try instance.storage.generation() != afterPeer)
    }

    @Test(arguments: StorageBackend.all)
    func generationMovesForWhatCachesHoldAndNotForReplayKeysOrSamples(_ backend: StorageBackend) throws {
        let instance = try backend.make()
        let storage = instance.storage
        let peer = try instance.peer()
        try TestContent.seed(storage, "talk", state: .live)
        var last = try instance.settledGeneration()
        func changed(_ what: String, _ expected: Bool, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let now = try instance.settledGeneration()
            #expect((now != last) == expected, "\(what)", sourceLocation: sourceLocation)
            last = now
        }
        let code = try StorageSuiteEnrollTests.code(peer)
        try changed("a new credential", true)
        let device = try #require(try peer.enroll(credentialHash: code, device: StorageSuiteEnrollTests.device(1), at: 1100))
        try changed("an enroll", true)
        #expect(try peer.enroll(credentialHash: code, device: StorageSuiteEnrollTests.device(2), at: 1100) == nil)
        try changed("a refused enroll", false)
        let sample = DiagSample(sessionId: "talk", deviceId: device.id, receivedAt: 1100, build: "1", platform: "ios", connection: [:])
        #expect(try peer.recordSignedRequest(replayKey: [1], expiresAt: 1700, sample: sample, at: 1100))
        #expect(try !peer.recordSignedRequest(replayKey: [1], expiresAt: 1700, sample: sample, at: 1101))
        _ = try peer.pruneReplayKeys(at: 9999)
        try changed("signed requests, samples and pruning", false)
        _ = try peer.advance(sessionId: "talk", to: 3, at: 1102)
        try changed("an advance", true)
        _ = try peer.advance(sessionId: "talk", to: 2, at: 1103)
        try changed("an advance behind the frontier", false)
        _ = try peer.updateSession(id: "talk", SessionUpdate(venueNetworks: [try IPNetwork(parsing: "10.0.0.0/8")]), at: 1104)
        try changed("a venue network", true)
        _ = try peer.importContent(TestContent.plan([TestContent.session("talk")]), options: ImportOptions(), at: 1105)
        try changed("an import that changes nothing", false)
        _ = try peer.importContent(TestContent.plan([TestContent.session("talk")], series: [TestContent.series("conf", sessions: ["talk"])]), options: ImportOptions(), at: 1106)
        try changed("a new series", true)
        #expect(try peer.revokeDevice(id: device.id, at: 1107))
        try changed("a revoked device", true)
        #expect(try peer.revokeCredential(hash: code, at: 1108))
        try changed("a revoked credential", true)
    }
}

/// The frontiers one thread read one after the other, and whether any read was lower than an earlier one.
final class Observer: @unchecked Sendable {
    private let lock = NSLock()
    private var highest = -1
    private(set) var reads = 0
    private(set) var wentBack = false
    func see(_ value: Int) {
        reads += 1
        lock.withLock {
            if value < highest { wentBack = true }
            highest = max(highest, value)
        }
    }
}
