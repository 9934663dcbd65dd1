import Foundation
import PulseCore
import PulseCrypto
@testable import PulseServer
@testable import PulseServerStorage
import PulseSystem
import Testing

/// Key material leaves only through `GET /api/sync/keys`, and only as the release table says: every
/// state × frontier × venue × allowDownload combination through the HTTP route, against a table written
/// out by hand (the same as docs/server.md's), with the key bytes compared to the imported table.
@Suite struct KeysReleaseWalkTests {
    /// Slides released (as a count from slide 0) for a 10-slide deck whose frontier is none, 0, 4, 9 and
    /// 15 (15 is stored as 9: the frontier is clamped to the deck), by state, allowDownload and venue.
    static let table: [String: [Int]] = [
        "draft false unlocked": [0, 0, 0, 0, 0], "draft false inside": [0, 0, 0, 0, 0], "draft false outside": [0, 0, 0, 0, 0],
        "draft true unlocked": [0, 0, 0, 0, 0], "draft true inside": [0, 0, 0, 0, 0], "draft true outside": [0, 0, 0, 0, 0],
        "scheduled false unlocked": [0, 0, 0, 0, 0], "scheduled false inside": [0, 0, 0, 0, 0], "scheduled false outside": [0, 0, 0, 0, 0],
        "scheduled true unlocked": [0, 0, 0, 0, 0], "scheduled true inside": [0, 0, 0, 0, 0], "scheduled true outside": [0, 0, 0, 0, 0],
        "rehearsal false unlocked": [0, 0, 0, 0, 0], "rehearsal false inside": [0, 0, 0, 0, 0], "rehearsal false outside": [0, 0, 0, 0, 0],
        "rehearsal true unlocked": [0, 0, 0, 0, 0], "rehearsal true inside": [0, 0, 0, 0, 0], "rehearsal true outside": [0, 0, 0, 0, 0],
        "live false unlocked": [0, 1, 5, 10, 10], "live false inside": [0, 1, 5, 10, 10], "live false outside": [0, 0, 0, 0, 0],
        "live true unlocked": [0, 1, 5, 10, 10], "live true inside": [0, 1, 5, 10, 10], "live true outside": [0, 0, 0, 0, 0],
        "ended false unlocked": [0, 1, 5, 10, 10], "ended false inside": [0, 1, 5, 10, 10], "ended false outside": [0, 0, 0, 0, 0],
        "ended true unlocked": [10, 10, 10, 10, 10], "ended true inside": [10, 10, 10, 10, 10], "ended true outside": [10, 10, 10, 10, 10],
    ]
    static let frontiers: [(session: String, maxShown: Int?)] = [("f-none", nil), ("f0", 0), ("f4", 4), ("f9", 9), ("f15", 15)]
    static let inside = "127.0.0.5", outside = "127.0.0.9"

    @Test func everyCombinationThroughTheRoute() throws {
        let harness = try SyncHarness(configure: { $0.deviceLimit = RateLimit(rate: 10_000, burst: 10_000) })
        let ids = Self.frontiers.map(\.session)
        try harness.seed(ids, slides: 10, series: "conf")
        let device = try harness.device(for: .series("conf"))
        for (id, maxShown) in Self.frontiers {
            if let maxShown { _ = try harness.storage.updateSession(id: id, SessionUpdate(maxShown: maxShown), at: harness.clock.seconds) }
        }
        #expect(try harness.storage.session(id: "f15")?.maxShown == 9)
        let venue = try IPNetwork(parsing: Self.inside + "/32")
        var checked = 0
        for state in SessionState.allCases {
            for allow in [false, true] {
                for place in ["unlocked", "inside", "outside"] {
                    let expected = try #require(Self.table["\(state.rawValue) \(allow) \(place)"])
                    for (column, (id, _)) in Self.frontiers.enumerated() {
                        _ = try harness.storage.updateSession(
                            id: id, SessionUpdate(state: state, allowDownload: allow, venueNetworks: place == "unlocked" ? [] : [venue]),
                            at: harness.clock.seconds)
                        let source = place == "inside" ? Self.inside : Self.outside
                        let response = try harness.client(source: source).signed(
                            "GET", "/api/sync/keys?session=\(id)", by: device, at: harness.clock.seconds)
                        #expect(response.status == 200 && response.header("cache-control") == "no-store")
                        let released = try Self.released(response)
                        let table = TestContent.keyTable(session: id, deckVersion: 1, slides: 10)
                        #expect(released == Self.withoutHashes(table.slides.prefix(expected[column])),
                                "\(state) allowDownload \(allow) \(place) session \(id): \(released.count) released, expected \(expected[column])")
                        #expect(try response.decodedJSON()["deckVersion"] == 1)
                        checked += 1
                    }
                }
            }
        }
        #expect(checked == 150)
    }

    /// The keys in an answer (the answer has no asset hash: compare with `withoutHashes`).
    static func released(_ response: RawHTTPResponse) throws -> [SlideKey] {
        let json = try response.decodedJSON()
        #expect(Set(json.objectValue?.keys.map { $0 } ?? []) == ["deckVersion", "released"])
        return try #require(json["released"]?.arrayValue).map { item in
            #expect(Set(item.objectValue?.keys.map { $0 } ?? []) == ["n", "keyB64", "nonceB64"])
            return SlideKey(n: item["n"]?.intValue ?? -1, assetHash: Self.noHash, keyB64: item["keyB64"]?.stringValue ?? "", nonceB64: item["nonceB64"]?.stringValue ?? "")
        }
    }

    /// Keys answers carry no hash: slides are compared with this one in its place.
    static let noHash = Digest(of: [UInt8]())

    static func withoutHashes(_ slides: some Sequence<SlideKey>) -> [SlideKey] {
        slides.map { SlideKey(n: $0.n, assetHash: noHash, keyB64: $0.keyB64, nonceB64: $0.nonceB64) }
    }

    /// The venue rule behind a trusted proxy: its `X-Forwarded-For` counts; another peer's does not.
    @Test func venueBehindATrustedProxy() throws {
        let harness = try SyncHarness(configure: { $0.trustedProxies = [try! IPNetwork(parsing: "127.0.0.7/32")] })
        try harness.seed(["talk"], state: .live)
        _ = try harness.storage.updateSession(
            id: "talk", SessionUpdate(maxShown: 3, venueNetworks: [try IPNetwork(parsing: "10.20.0.0/16")]), at: harness.clock.seconds)
        let device = try harness.device(for: .session("talk"))
        func count(from source: String, forwardedFor: String?) throws -> Int {
            let headers = forwardedFor.map { [("X-Forwarded-For", $0)] } ?? []
            let response = try harness.client(source: source).signed(
                "GET", "/api/sync/keys?session=talk", by: device, at: harness.clock.seconds, headers: headers)
            return try Self.released(response).count
        }
        #expect(try count(from: "127.0.0.7", forwardedFor: "10.20.3.4") == 4)
        #expect(try count(from: "127.0.0.7", forwardedFor: "10.20.3.4, 192.0.2.1") == 0)  // the proxy saw 192.0.2.1
        #expect(try count(from: "127.0.0.7", forwardedFor: nil) == 0)
        #expect(try count(from: "127.0.0.8", forwardedFor: "10.20.3.4") == 0)  // not a trusted proxy: the header is ignored
        #expect(try count(from: "127.0.0.7", forwardedFor: "garbage") == 0)
    }

    /// A new deckVersion releases nothing of the new deck beyond the frontier, and its own keys.
    @Test func aNewDeckReleasesOnlyUpToTheFrontier() throws {
        let harness = try SyncHarness()
        try harness.seed(["talk"], slides: 10, state: .live)
        _ = try harness.storage.advance(sessionId: "talk", to: 4, at: harness.clock.seconds)
        let device = try harness.device(for: .session("talk"))
        let client = try harness.client()
        #expect(try Self.released(client.signed("GET", "/api/sync/keys?session=talk", by: device, at: harness.clock.seconds)).count == 5)
        let newDeck = TestContent.session("talk", deckVersion: 2, slides: 20, seed: "v2")
        _ = try harness.storage.importContent(TestContent.plan([newDeck]), options: ImportOptions(), at: harness.clock.seconds)
        let response = try client.signed("GET", "/api/sync/keys?session=talk", by: device, at: harness.clock.seconds)
        #expect(try response.decodedJSON()["deckVersion"] == 2)
        let table = TestContent.keyTable(session: "talk", deckVersion: 2, slides: 20, seed: "v2")
        #expect(try Self.released(response) == Self.withoutHashes(table.slides.prefix(5)))
        // The organizer allows the download after the talk: the whole new deck.
        _ = try harness.storage.updateSession(id: "talk", SessionUpdate(state: .ended, allowDownload: true), at: harness.clock.seconds)
        #expect(try Self.released(client.signed("GET", "/api/sync/keys?session=talk", by: device, at: harness.clock.seconds)).count == 20)
    }
}
