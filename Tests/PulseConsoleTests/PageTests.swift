import Foundation
import PulseCore
import PulseCrypto
import PulseHTML
import PulseServerStorage
import PulseSyncAPI
import SyncTestSupport
import Testing
@testable import PulseConsole

@Suite struct PageTests {
    static let hostile = [#"<img src=x onerror=alert(1)>"#, #"</script><script>alert(1)</script>"#, #"" onmouseover="alert(1)"#]

    static func record(_ id: String, state: SessionState = .live, shown: Int? = 2) -> SessionRecord {
        SessionRecord(
            id: id, state: state, maxShown: shown, rehearsalMaxShown: nil, allowDownload: false, venueNetworks: [], packageId: PackageID(String(repeating: "0", count: 32))!, seriesId: "s",
            packageVersion: "v", deckVersion: 1, slideCount: 12, changeSequence: 1, updatedAt: 0)
    }

    /// Package strings (titles, rooms) are only ever text on the sessions page.
    @Test func hostileTitlesAndRoomsRenderAsText() throws {
        var infos: [String: SessionCatalog.Info] = [:]
        for (index, text) in Self.hostile.enumerated() {
            infos["s\(index)"] = SessionCatalog.Info(title: text, room: text, startsAt: "2026-12-03T09:30:00+01:00", endsAt: nil, timezone: text)
        }
        let view = SessionsPage.view(infos.keys.map { Self.record($0) }, infos: infos, holders: KeyHolders())
        let html = view.content.renderedString
        for text in Self.hostile { #expect(!html.contains(text)) }
        #expect(html.contains("&lt;img src=x onerror=alert(1)&gt;"))
        #expect(html.contains("&lt;/script&gt;&lt;script&gt;"))
        #expect(!html.contains("<script"))
    }

    /// A device enrolled with a hostile name: no console page shows its raw bytes.
    @Test func aHostileDeviceNameNeverAppearsRaw() throws {
        let harness = try ConsoleHarness()
        for name in Self.hostile {
            let code = try harness.server.deviceCode(.session("keynote"))
            let key = try P256.PrivateKey()
            let body = JSONValue.object([
                "token": .string(code), "publicKey": .string(Data(key.publicKey.derRepresentation).base64EncodedString()),
                "platform": .string("ios"), "name": .string(name),
            ]).canonicalBytes
            let enroll = try harness.client().request("POST", "/api/sync/enroll", [("Content-Type", "application/json")], body: body)
            #expect(enroll.status == 200, "\(enroll.text)")
        }
        let (cookie, _) = try harness.admin()
        for path in ["/console/sessions", "/console/sessions/keynote"] {
            let html = try harness.get(path, cookie: cookie).text
            for name in Self.hostile { #expect(!html.contains(name), "\(path)") }
        }
    }

    /// The session page: the state buttons, the clicker and the rules, with the names the issue gives them.
    @Test func theSessionPageNamesItsControlsAsTheIssueSays() throws {
        let harness = try ConsoleHarness()
        let (cookie, _) = try harness.admin()
        let html = try harness.get("/console/sessions/keynote", cookie: cookie).text
        for name in ["Set scheduled", "Start rehearsal", "Go live", "End session", "Next slide"] {
            #expect(html.contains(">\(name)</button>"), "\(name)")
        }
        #expect(html.contains("Slide 0 of "))
        #expect(html.contains(" devices have this slide&#39;s key"))
        #expect(html.contains("the frontier never goes back"))
        #expect(html.contains(#"data-events="/console/sessions/keynote/events""#))
        #expect(html.contains("Download after the session"))
        #expect(html.contains("Venue rule"))
        #expect(html.contains("Shipping Encrypted Slide Decks"), "the title from the manifest")
    }

    @Test func theSessionsPageListsEverySessionWithItsOwnTime() throws {
        let harness = try ConsoleHarness()
        let (cookie, _) = try harness.admin()
        let html = try harness.get("/console/sessions", cookie: cookie).text
        #expect(html.contains(#"href="/console/sessions/keynote""#))
        #expect(html.contains(#"href="/console/sessions/workshop""#))
        #expect(html.contains("2026-12-03 09:30–10:30 Europe/Berlin"))
        #expect(html.contains(">Sessions</a>"))
        #expect(html.contains("DevConf") || html.contains("devconf"), "the event's name in the header")
    }

    @Test func clickerCountsTheDevicesHoldingTheFrontiersKey() {
        let holders = KeyHolders()
        holders.watching(session: "s", device: "a")
        holders.record(session: "s", device: "b", deckVersion: 1, released: 0..<3)
        holders.record(session: "s", device: "c", deckVersion: 1, released: 0..<2)
        holders.record(session: "s", device: "d", deckVersion: 0, released: 0..<9)
        let clicker = Clicker(Self.record("s", shown: 2), holders: holders)
        #expect(clicker.slideText == "Slide 3 of 12")
        #expect(clicker.keysText == "1 of 4 devices have this slide's key")
        #expect(clicker.next == 3)
        #expect(clicker.canAdvance)
        #expect(!Clicker(Self.record("s", state: .scheduled), holders: holders).canAdvance)
    }

    /// The sessions page of 200 sessions: how long one render takes (printed for docs/console.md; no bound
    /// asserted here, the machine is shared).
    @Test func renderBenchSessionsPageWith200Sessions() {
        let holders = KeyHolders()
        var infos: [String: SessionCatalog.Info] = [:]
        var records: [SessionRecord] = []
        for index in 0..<200 {
            let id = "session-\(index)"
            records.append(Self.record(id))
            infos[id] = SessionCatalog.Info(
                title: "Session number \(index) about things", room: "Room \(index % 12)", startsAt: "2026-12-03T09:30:00+01:00",
                endsAt: "2026-12-03T10:30:00+01:00", timezone: "Europe/Berlin")
            for device in 0..<50 { holders.record(session: id, device: "d\(index)-\(device)", deckVersion: 1, released: 0..<(device % 5)) }
        }
        var times: [Double] = []
        var bytes = 0
        for _ in 0..<50 {
            let start = DispatchTime.now().uptimeNanoseconds
            let html = SessionsPage.view(records, infos: infos, holders: holders).content.render()
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
            bytes = html.count
        }
        times.sort()
        print("console render bench: sessions page, 200 sessions, \(bytes) bytes: median \(times[25]) ms, max \(times.last ?? 0) ms (50 renders, debug build)")
        #expect(bytes > 200 * 100)
    }
}

