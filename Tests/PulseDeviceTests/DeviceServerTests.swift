import Foundation
import PulseAnswerSignature
import PulseCore
import PulseCrypto
import PulseServer
import PulseServerStorage
import PulseTestSupport
import SyncTestSupport
import Testing
@testable import PulseDevice

/// The reference client against the real sync server (in this process) and the real packager's samples.
@Suite struct DeviceServerTests {
    @Test func aSeriesDevicePreCachesOverTheCDNThenAConditionalGetIsAll() throws {
        let work = try TestFolder()
        let package = try SamplePackage.build(in: work.url)
        let server = try TestSyncServer(package: package, publicPart: false)
        let cdn = try TestOrigin(package: package)
        let device = try TestDevice(server, token: try server.deviceCode(.series("devconf-2026")))
        #expect(device.identity.scopeKind == "series" && device.identity.scopeId == "devconf-2026")
        let first = try device.sync(.series("devconf-2026"), assets: cdn.url)
        let unique = Set(try ["keynote", "workshop"].flatMap { try #require(try device.cache.sessionManifest($0)).assets.map(\.hash) })
        #expect(first.blobsFetched == unique.count && first.blobBytesFetched == first.fullBytes)
        #expect(cdn.counter.count("GET /api/sync/asset/") == unique.count, "every blob came from the CDN, once")
        // Against a server that signs, each sync starts with its answer keys (signed answers), never the time.
        #expect(first.requests == 1 + 3 + unique.count, "the answer keys, the series, two session manifests, the blobs")
        #expect(device.cache.check().isEmpty)
        let again = try device.sync(.series("devconf-2026"), assets: cdn.url)
        #expect(again.requests == 1 + 1 && again.blobsFetched == 0 && again.items.allSatisfy { $0.outcome == .unchanged })
    }

    /// `admin answer-key rotate` on the real server: the device learns the new key while the old one still
    /// signs (the lead), and after the switch takes answers signed by the new one.
    @Test func anAnswerKeyRotationOnTheServerIsFollowedByTheDevice() throws {
        let work = try TestFolder()
        let package = try SamplePackage.build(in: work.url)
        let server = try TestSyncServer(package: package, storedAnswerKeys: true)
        _ = try server.set("keynote", SessionUpdate(state: .live))
        let device = try TestDevice(server, token: try server.deviceCode(.session("keynote")))
        #expect(try device.sync(.session("keynote")).refusals.isEmpty)
        let keys = try #require(server.storage as? any AnswerKeyStorage)
        let rotated = try keys.rotateAnswerKey(lead: 2, at: Int64(Date().timeIntervalSince1970))
        let published = try AnswerKeySet.parse(try device.client.signed("GET", "/api/sync/answer-keys").body)
        #expect(published.map(\.kid).contains(rotated.kid), "the server publishes the new key at once")
        let during = try device.sync(.session("keynote"))
        #expect(during.refusals.isEmpty, "\(during.refusals)")
        #expect(try AnswerCheck.trustedKeys(try AnswerState.read(device.folder.answersURL)).count == 2, "the new key learned during the lead")
        Thread.sleep(forTimeInterval: 3)
        try server.advance("keynote", to: 1)
        let after = try device.sync(.session("keynote"))
        #expect(after.refusals.isEmpty, "\(after.refusals)")
        // The answers now verify with the new key alone.
        let newest = published.filter { $0.kid == rotated.kid }
        let answer = try device.client.signed("GET", "/api/sync/keys?session=keynote")
        let header = try #require(answer.headers["pulse-signature"] ?? answer.headers["Pulse-Signature"])
        #expect(newest.count == 1)
        #expect(throws: Never.self) { try AnswerSignature.verify(header: header, body: answer.body, keys: newest) }
    }

    @Test func replacingOneSlideCostsExactlyOneBlob() throws {
        let work = try TestFolder()
        let package = try SamplePackage.build(in: work.url)
        let server = try TestSyncServer(package: package)
        let device = try TestDevice(server, token: try server.deviceCode(.series("devconf-2026")))
        _ = try device.sync(.series("devconf-2026"))
        let before = try #require(try device.cache.sessionManifest("workshop"))
        try package.replaceWorkshopSlide(5)
        try package.rebuild()
        try server.importPackage(package)
        let report = try device.sync(.series("devconf-2026"))
        #expect(report.blobsFetched == 1 && report.garbage.blobs == 1)
        #expect(report.items.first { $0.id == "workshop" }?.outcome == .updated && report.items.first { $0.id == "keynote" }?.outcome == .unchanged)
        let after = try #require(try device.cache.sessionManifest("workshop"))
        #expect(after.deckVersion == (before.deckVersion ?? 0) + 1)
        #expect(zip(before.slides, after.slides).filter { $0.asset != $1.asset }.map(\.0.n) == [4])
        #expect(report.blobBytesFetched == after.slides[4].asset.bytes && report.blobBytesFetched < report.fullBytes / 10)
        #expect(device.cache.check().isEmpty)
    }

    @Test func releasedSlidesOpenInMemoryOthersAreRefusedAndNoKeyTouchesTheDisk() throws {
        let work = try TestFolder()
        let package = try SamplePackage.build(in: work.url)
        let server = try TestSyncServer(package: package)
        let device = try TestDevice(server, token: try server.deviceCode(.session("keynote")))
        _ = try device.sync(.session("keynote"))
        let manifest = try #require(try device.cache.sessionManifest("keynote"))
        #expect(try device.keys("keynote").slides.isEmpty, "draft: no key")
        #expect { try device.keys("keynote").open(slide: 0, of: manifest, cache: device.cache) } throws: { ($0 as? DeviceError)?.kind == .notReleased }

        try server.set("keynote", SessionUpdate(state: .live))
        try server.advance("keynote", to: 2)
        let keys = try device.keys("keynote")
        #expect(keys.slides == [0, 1, 2])
        let table = try server.keyTable("keynote")
        for n in 0...2 {
            let plaintext = try keys.open(slide: n, of: manifest, cache: device.cache)
            let slide = table.slides[n]
            let blob = try Data(contentsOf: package.publicPart.appendingPathComponent("assets/\(slide.assetHash)"))
            let expected = try AES256GCM.open(blob, key: Array(Data(base64Encoded: slide.keyB64)!), nonce: Array(Data(base64Encoded: slide.nonceB64)!))
            #expect(plaintext.withUnsafeBytes { Array($0) } == expected)
            #expect(SlideKind.of(plaintext) == .pdf)
        }
        #expect { try keys.open(slide: 3, of: manifest, cache: device.cache) } throws: { error in
            (error as? DeviceError)?.kind == .notReleased && "\(error)".contains("slides 0–2")
        }
        // Nothing in the device folder holds a released key or nonce, raw or base64.
        let secrets = table.slides.prefix(3).flatMap { slide in
            [slide.keyB64, slide.nonceB64].map { Array($0.utf8) } + [Array(Data(base64Encoded: slide.keyB64)!)]
        }
        for (name, bytes) in try device.everyFileBytes() {
            for secret in secrets { #expect(!Self.contains(bytes, secret), "\(name) holds key material") }
        }
    }

    @Test func keysForAnotherDeckVersionAreRefusedUntilTheDeviceSyncs() throws {
        let work = try TestFolder()
        let package = try SamplePackage.build(in: work.url)
        let server = try TestSyncServer(package: package)
        let device = try TestDevice(server, token: try server.deviceCode(.session("workshop")))
        _ = try device.sync(.session("workshop"))
        try server.set("workshop", SessionUpdate(state: .live))
        try server.advance("workshop", to: 5)
        try package.replaceWorkshopSlide(5)
        try package.rebuild()
        try server.importPackage(package)
        let cached = try #require(try device.cache.sessionManifest("workshop"))
        let keys = try device.keys("workshop")
        #expect(keys.deckVersion == (cached.deckVersion ?? 0) + 1)
        #expect { try keys.open(slide: 4, of: cached, cache: device.cache) } throws: { error in
            (error as? DeviceError)?.kind == .staleDeck && "\(error)".contains("run pulse-device sync")
        }
        #expect(try device.sync(.session("workshop")).blobsFetched == 1)
        let synced = try #require(try device.cache.sessionManifest("workshop"))
        #expect(try keys.open(slide: 4, of: synced, cache: device.cache).count > 0)
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count, let first = needle.first else { return false }
        var index = 0
        while index + needle.count <= haystack.count {
            if haystack[index] == first && haystack[index..<(index + needle.count)].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }
}
