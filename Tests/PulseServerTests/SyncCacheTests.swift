import Foundation
import PulseCrypto
import PulseTestSupport
import SyncTestSupport
import Testing
@testable import PulseServer
@testable import PulseServerStorage
@testable import PulseSyncAPI

/// The request path's cache: each kind dropped only when its own counter moves.
@Suite struct SyncCacheTests {
    @Test func eachKindIsDroppedOnlyWhenItChanged() throws {
        let folder = try TestFolder()
        let storage = try SQLiteStorage(path: folder.url.appendingPathComponent("s.sqlite").path)
        try TestContent.seed(storage, "talk", state: .live)
        let administration = Administration(storage: storage, clock: { 1000 })
        var ids: [String] = []
        for _ in 0..<3 {
            let code = try administration.createDeviceCode(scope: .session("talk"))
            let key = try P256.PrivateKey().publicKey.derRepresentation
            let device = try #require(try storage.enroll(
                credentialHash: CredentialSecret.hash(code.text)!, device: NewDevice(id: try DeviceID.generate(), publicKey: key, platform: "ios", name: "x"), at: 1000))
            ids.append(device.id)
        }
        let cache = SyncCache(storage: storage)
        #expect(try cache.warmPublicKeys() == 3)
        #expect(try cache.warmPublicKeys() == 0)
        try cache.revalidate()
        for id in ids { _ = try cache.device(id) }
        _ = try cache.session("talk")
        _ = try cache.keys(session: "talk", deckVersion: 1)
        #expect(cache.held == (3, 1, 1, 3))

        // An advance: the session goes, devices and key tables stay.
        _ = try storage.advance(sessionId: "talk", to: 2, at: 1001)
        try cache.revalidate()
        #expect(cache.held == (3, 0, 1, 3))
        #expect(try cache.session("talk")?.maxShown == 2)
        // An enrollment: nothing goes.
        _ = try storage.enroll(credentialHash: CredentialSecret.hash(try administration.createDeviceCode(scope: .session("talk")).text)!,
                               device: NewDevice(id: try DeviceID.generate(), publicKey: [1], platform: "ios", name: "y"), at: 1002)
        try cache.revalidate()
        #expect(cache.held == (3, 1, 1, 3))
        // A revocation: the device records go (to be read again), the parsed keys stay.
        #expect(try storage.revokeDevice(id: ids[0], at: 1003))
        try cache.revalidate()
        #expect(cache.held == (0, 1, 1, 3))
        #expect(try cache.device(ids[0])?.record.isRevoked == true)
        // An import: content goes.
        _ = try storage.importContent(TestContent.plan([TestContent.session("talk", deckVersion: 2, slides: 4, seed: "2")]), options: ImportOptions(), at: 1004)
        try cache.revalidate()
        #expect(cache.held.keys == 0 && cache.held.sessions == 0)
    }
}
