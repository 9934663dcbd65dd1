import Foundation
import PulseCore
import PulseCrypto
import Testing
@testable import PulseDevice

/// The delta sync against an in-memory server: what is fetched, kept, dropped, resumed and refused.
@Suite struct SyncAlgorithmTests {
    @Test func aSessionIsFetchedOnceThenAConditionalGetIsAll() throws {
        let server = FakeServer()
        let slides = try (0..<5).map { _ in try server.putBlob(3000) }
        server.putManifest("session/a", ["session": ["id": "a"], "deckVersion": 1, "slides": FakeServer.slides(slides)])
        let device = try FakeDevice(server)
        let first = try device.sync(.session("a"))
        #expect(first.items.first?.outcome == .new && first.blobsFetched == 5 && first.blobBytesFetched == 15_000 && first.fullBytes == 15_000)
        #expect(device.cache.check().isEmpty)
        server.reset()
        let second = try device.sync(.session("a"))
        #expect(second.items.first?.outcome == .unchanged && second.blobsFetched == 0 && second.requests == 1)
        #expect(server.requests.first?.headers["if-none-match"] != nil)
    }

    /// Two sessions share a photo; the one that stops naming it must not take it from the other.
    @Test func garbageCountsReferencesAcrossEveryCachedManifest() throws {
        let server = FakeServer()
        let photo = try server.putBlob(500)
        let a1 = try server.putBlob(1000), a2 = try server.putBlob(1000), b1 = try server.putBlob(1000)
        server.putManifest("session/a", ["deckVersion": 1, "slides": FakeServer.slides([a1]), "speakers": [["id": "ada", "photo": ["assetHash": .string(photo.hash.hex), "bytes": 500]]]])
        server.putManifest("session/b", ["deckVersion": 1, "slides": FakeServer.slides([b1]), "speakers": [["id": "ada", "photo": ["assetHash": .string(photo.hash.hex), "bytes": 500]]]])
        let device = try FakeDevice(server)
        _ = try device.sync(.session("a"))
        _ = try device.sync(.session("b"))
        #expect(device.blobNames == [photo.hash.hex, a1.hash.hex, b1.hash.hex])
        // a's next version drops the photo and its slide: only its slide goes, b still needs the photo.
        server.putManifest("session/a", ["deckVersion": 2, "slides": FakeServer.slides([a2])])
        let changed = try device.sync(.session("a"))
        #expect(changed.blobsFetched == 1 && changed.garbage.blobs == 1 && changed.garbage.bytes == 1000)
        #expect(device.blobNames == [photo.hash.hex, a2.hash.hex, b1.hash.hex])
        // b drops it too: now nobody names it.
        server.putManifest("session/b", ["deckVersion": 2, "slides": FakeServer.slides([b1])])
        #expect(try device.sync(.session("b")).garbage.blobs == 1)
        #expect(device.blobNames == [a2.hash.hex, b1.hash.hex])
        #expect(device.cache.check().isEmpty)
    }

    @Test func bytesThatDoNotHashToTheirNameAreNeverKeptAndThePreviousCacheStays() throws {
        let server = FakeServer()
        let old = try (0..<3).map { _ in try server.putBlob(2000) }
        let v1 = server.putManifest("session/a", ["deckVersion": 1, "slides": FakeServer.slides(old)])
        let device = try FakeDevice(server)
        _ = try device.sync(.session("a"))
        let fresh = try server.putBlob(2000)
        server.with { $0.corrupt.insert(fresh.hash.hex) }
        server.putManifest("session/a", ["deckVersion": 2, "slides": FakeServer.slides([old[0], fresh])])
        #expect {
            try device.sync(.session("a"))
        } throws: { ($0 as? DeviceError)?.kind == .integrity }
        #expect(try device.cache.sessionManifest("a")?.bytes == v1, "the commit point still names the previous version")
        #expect(device.cache.check().isEmpty, "every blob of the previous version is still there and whole")
        #expect(!device.blobNames.contains(fresh.hash.hex))
        #expect(!FileManager.default.fileExists(atPath: device.folder.partialURL.appendingPathComponent(fresh.hash.hex).path))
        server.with { $0.corrupt = [] }
        #expect(try device.sync(.session("a")).blobsFetched == 1)
        #expect(try device.cache.sessionManifest("a")?.deckVersion == 2)
    }

    @Test func anInterruptedDownloadResumesWithRangeAndIfRange() throws {
        let server = FakeServer()
        let big = try server.putBlob(10_000)
        server.with { $0.cutAfter[big.hash.hex] = 4000 }
        server.putManifest("session/a", ["deckVersion": 1, "slides": FakeServer.slides([big])])
        let device = try FakeDevice(server)
        #expect(throws: DeviceError.self) { try device.sync(.session("a")) }
        let partial = device.folder.partialURL.appendingPathComponent(big.hash.hex).path
        #expect(BlobDownloader.size(partial) == 4000)
        #expect(try String(contentsOfFile: partial + ".etag", encoding: .utf8) == "\"\(big.hash.hex)\"")
        #expect(try device.cache.sessionManifest("a") == nil, "nothing committed")
        server.reset()
        let report = try device.sync(.session("a"))
        let asked = try #require(server.requests.first { $0.target.hasPrefix("/api/sync/asset/") })
        #expect(asked.headers["range"] == "bytes=4000-" && asked.headers["if-range"] == "\"\(big.hash.hex)\"")
        #expect(report.items[0].resumedBytes == 4000 && report.blobBytesFetched == 6000)
        #expect(device.cache.check().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: partial) && !FileManager.default.fileExists(atPath: partial + ".etag"))
    }

    @Test func aValidatorThatNoLongerMatchesGetsTheWholeBlob() throws {
        let server = FakeServer()
        let big = try server.putBlob(8000)
        server.putManifest("session/a", ["deckVersion": 1, "slides": FakeServer.slides([big])])
        let device = try FakeDevice(server)
        try device.folder.makeCacheFolders()
        let partial = device.folder.partialURL.appendingPathComponent(big.hash.hex)
        try Data(server.with { $0.blobs[big.hash.hex]! }.prefix(3000)).write(to: partial)
        try Data("\"an older validator\"".utf8).write(to: URL(fileURLWithPath: partial.path + ".etag"))
        let report = try device.sync(.session("a"))
        #expect(report.items[0].resumedBytes == 0 && report.blobBytesFetched == 8000)
        #expect(device.cache.check().isEmpty)
    }

    @Test func aResumedBlobThatDoesNotHashIsFetchedWholeOnce() throws {
        let server = FakeServer()
        let big = try server.putBlob(8000)
        server.putManifest("session/a", ["deckVersion": 1, "slides": FakeServer.slides([big])])
        let device = try FakeDevice(server)
        try device.folder.makeCacheFolders()
        let partial = device.folder.partialURL.appendingPathComponent(big.hash.hex)
        try Data(repeating: 7, count: 3000).write(to: partial)   // not the blob's first bytes
        try Data("\"\(big.hash.hex)\"".utf8).write(to: URL(fileURLWithPath: partial.path + ".etag"))
        server.reset()
        let report = try device.sync(.session("a"))
        let assets = server.requests.filter { $0.target.hasPrefix("/api/sync/asset/") }
        #expect(assets.count == 2 && assets[0].headers["range"] != nil && assets[1].headers["range"] == nil)
        #expect(report.blobBytesFetched == 5000 + 8000 && report.items[0].resumedBytes == 0)
        #expect(device.cache.check().isEmpty)
    }

    @Test func aSeriesRefNamingTheCachedVersionCostsNoRequest() throws {
        let server = FakeServer()
        let a = try server.putBlob(100), b = try server.putBlob(100), a2 = try server.putBlob(100)
        let va = server.putManifest("session/a", ["deckVersion": 1, "slides": FakeServer.slides([a])])
        let vb = server.putManifest("session/b", ["deckVersion": 1, "slides": FakeServer.slides([b])])
        func version(_ bytes: [UInt8]) -> JSONValue { (try! JSONValue.parse(bytes))["packageVersion"]! }
        server.putManifest("series/s", ["days": [], "rooms": [], "sessions": [["id": "a", "title": "A", "packageVersion": version(va)], ["id": "b", "title": "B", "packageVersion": version(vb)]]])
        let device = try FakeDevice(server)
        #expect(try device.sync(.series("s")).blobsFetched == 2)
        let va2 = server.putManifest("session/a", ["deckVersion": 2, "slides": FakeServer.slides([a2])])
        server.putManifest("series/s", ["days": [], "rooms": [], "sessions": [["id": "a", "title": "A", "packageVersion": version(va2)], ["id": "b", "title": "B", "packageVersion": version(vb)]]])
        server.reset()
        let report = try device.sync(.series("s"))
        #expect(server.requests.map(\.target) == ["/api/sync/series/s/manifest", "/api/sync/manifest?session=a", "/api/sync/asset/\(a2.hash.hex)"])
        #expect(report.blobsFetched == 1 && report.garbage.blobs == 1 && report.requests == 3)
    }

    /// A device whose clock is ten minutes off: one 401, one read of the server's clock, the request again.
    @Test func aDeviceTenMinutesOffReadsTheServerClockAndRetriesOnce() throws {
        let server = FakeServer()
        server.with { $0.keys["a"] = Array(#"{"deckVersion":1,"released":[]}"#.utf8) }
        let device = try FakeDevice(server, skew: -600)
        let keys = try ReleasedKeys.fetch(session: "a", client: device.client)
        #expect(keys.slides.isEmpty)
        #expect(server.requests.map(\.target) == ["/api/sync/keys?session=a", "/api/sync/time", "/api/sync/keys?session=a"])
        #expect(abs(device.client.clock.correction - 600) <= 1)
        server.reset()
        _ = try ReleasedKeys.fetch(session: "a", client: device.client)
        #expect(server.requests.count == 1, "the correction is kept for the next request")
    }

    @Test func aSecondStaleAnswerIsAnErrorNotALoop() throws {
        let server = FakeServer()
        server.with { $0.alwaysStale = true }
        let device = try FakeDevice(server)
        #expect {
            try ReleasedKeys.fetch(session: "a", client: device.client)
        } throws: { ($0 as? DeviceError)?.message.contains("staleSignature") == true }
        #expect(server.requests.map(\.target) == ["/api/sync/keys?session=a", "/api/sync/time", "/api/sync/keys?session=a"])
    }
}
