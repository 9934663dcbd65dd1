import Foundation
import PulseCrypto
import PulseServer
import PulseServerStorage
import Testing

/// Rate limits, staff tokens and which kind of change moves which generation counter, run against
/// every backend.
@Suite struct StorageSuiteLimitsTests {
    /// The same walk as `TokenBucketsTests`: every backend's buckets behave as the in-memory ones.
    @Test(arguments: StorageBackend.all)
    func aBucketAllowsItsBurstThenItsRate(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        let limit = RateLimit(rate: 5, burst: 10)
        for _ in 0..<10 { #expect(try storage.takeRateToken("d", limit: limit, at: 100) == .allowed) }
        #expect(try storage.takeRateToken("d", limit: limit, at: 100) == .limited(retryAfter: 1))
        #expect(try storage.takeRateToken("e", limit: limit, at: 100) == .allowed)
        #expect(try storage.takeRateToken("d", limit: limit, at: 100.2) == .allowed)
        #expect(try storage.takeRateToken("d", limit: limit, at: 100.2) == .limited(retryAfter: 1))
        let slow = RateLimit(rate: 0.1, burst: 1)
        #expect(try storage.takeRateToken("s", limit: slow, at: 0) == .allowed)
        #expect(try storage.takeRateToken("s", limit: slow, at: 1) == .limited(retryAfter: 9))
        #expect(try storage.takeRateToken("s", limit: slow, at: -50) == .limited(retryAfter: 9))  // a clock that went back
        #expect(try storage.takeRateToken("s", limit: slow, at: 11) == .allowed)
    }

    @Test(arguments: StorageBackend.all)
    func fortyConcurrentTakesFromABurstOfTenAllowTen(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        let allowed = Counter(), failures = Counter()
        DispatchQueue.concurrentPerform(iterations: 40) { _ in
            do {
                if try storage.takeRateToken("device x", limit: RateLimit(rate: 5, burst: 10), at: 500) == .allowed { allowed.add() }
            } catch { failures.add() }
        }
        #expect(failures.value == 0 && allowed.value == 10)
    }

    @Test(arguments: StorageBackend.all)
    func activeStaffTokensAreTheUnrevokedUnexpiredOnes(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        try TestContent.seed(storage, "talk")
        let hashes = (0..<4).map { SHA256.hash(Array("staff \($0)".utf8)) }
        try storage.addCredential(NewCredential(hash: hashes[0], kind: .staffToken, scope: nil, createdAt: 1000))
        try storage.addCredential(NewCredential(hash: hashes[1], kind: .staffToken, scope: nil, createdAt: 1000, expiresAt: 2000))
        try storage.addCredential(NewCredential(hash: hashes[2], kind: .staffToken, scope: nil, createdAt: 1000))
        try storage.addCredential(NewCredential(hash: hashes[3], kind: .deviceCode, scope: .session("talk"), createdAt: 1000))
        #expect(try storage.revokeCredential(hash: hashes[2], at: 1100))
        let active = try storage.activeStaffTokens(at: 1500)
        #expect(Set(active.map(\.hash)) == [hashes[0], hashes[1]])
        #expect(active.first { $0.hash == hashes[1] }?.expiresAt == 2000)
        #expect(try storage.activeStaffTokens(at: 2000).map(\.hash) == [hashes[0]])  // expiry is exclusive
    }

    @Test(arguments: StorageBackend.all)
    func eachKindOfChangeMovesItsOwnCounter(_ backend: StorageBackend) throws {
        let instance = try backend.make()
        let peer = try instance.peer()
        try TestContent.seed(instance.storage, "talk", state: .live)
        var last = try instance.settledGeneration()
        /// What moved since the last look, by another instance's change.
        func moved(sourceLocation: SourceLocation = #_sourceLocation) throws -> Set<String> {
            let now = try instance.settledGeneration()
            defer { last = now }
            var kinds: Set<String> = []
            if now.value != last.value { kinds.insert("value") }
            if now.credentials != last.credentials { kinds.insert("credentials") }
            if now.devices != last.devices { kinds.insert("devices") }
            if now.sessions != last.sessions { kinds.insert("sessions") }
            if now.content != last.content { kinds.insert("content") }
            return kinds
        }
        let code = try StorageSuiteEnrollTests.code(peer)
        #expect(try moved() == ["value", "credentials"])
        let device = try #require(try peer.enroll(credentialHash: code, device: StorageSuiteEnrollTests.device(1), at: 1100))
        #expect(try moved() == ["value"])  // a new device is a cache miss; the spent code is no cached credential
        _ = try peer.advance(sessionId: "talk", to: 3, at: 1101)
        #expect(try moved() == ["value", "sessions"])
        _ = try peer.importContent(TestContent.plan([TestContent.session("talk", manifestNote: "moved")]), options: ImportOptions(), at: 1102)
        #expect(try moved() == ["value", "sessions", "content"])
        #expect(try peer.revokeDevice(id: device.id, at: 1103))
        #expect(try moved() == ["value", "devices"])
        _ = try peer.takeRateToken("device \(device.id)", limit: RateLimit(rate: 1, burst: 1), at: 1104)
        #expect(try peer.recordSignedRequest(replayKey: [1], expiresAt: 2000, sample: nil, at: 1104))
        #expect(try moved() == [])
    }
}
