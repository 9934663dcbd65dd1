import Foundation
import PulseCore
import PulseCrypto
import PulseSystem
import PulseTestSupport
import SyncTestSupport
import Synchronization
import Testing
@testable import PulseServer
@testable import PulseServerStorage
@testable import PulseSyncAPI

/// Issue 17, item 5: a durable registration token is no amplifier. It enrolls at its own rate from every
/// address together, the devices it enrolled share a cap on open event streams, the listings show what it
/// enrolled in the last minute, and one revocation cuts every device it enrolled.
@Suite struct TokenLimitTests {
    static func token(_ harness: SyncHarness, _ limits: TokenLimits = .defaults, maxDevices: Int? = nil) throws -> String {
        try harness.administration.createRegistrationToken(series: "conf", maxDevices: maxDevices, limits: limits).text
    }

    static func enroll(_ harness: SyncHarness, _ token: String, from source: String) throws -> RawHTTPResponse {
        try harness.client(source: source).request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: token, key: try P256.PrivateKey()))
    }

    @Test func aTokenEnrollsAtItsOwnRateFromEveryAddressTogether() throws {
        let harness = try SyncHarness(configure: {
            $0.enrollLimit = RateLimit(rate: 1000, burst: 1000)  // a venue NAT: the per-address limit is raised
            $0.tokenEnrollLimit = RateLimit(rate: 1, burst: 3)
        })
        try harness.seed(["talk"], series: "conf", state: .live)
        let link = try Self.token(harness)
        let other = try Self.token(harness)
        let own = try Self.token(harness, TokenLimits(enrollRate: 1, enrollBurst: 5))
        for index in 0..<3 { #expect(try Self.enroll(harness, link, from: "127.0.0.\(10 + index)").status == 200) }
        let limited = try Self.enroll(harness, link, from: "127.0.0.20")
        #expect(limited.status == 429 && limited.header("retry-after") == "1" && limited.json == ["error": "rateLimited"])
        // Another token, and a token with a burst of its own, are not held back by it.
        #expect(try Self.enroll(harness, other, from: "127.0.0.20").status == 200)
        for index in 0..<5 { #expect(try Self.enroll(harness, own, from: "127.0.0.\(30 + index)").status == 200) }
        #expect(try Self.enroll(harness, own, from: "127.0.0.40").status == 429)
        // A second later the link enrolls one more.
        harness.clock.advance(by: 1)
        #expect(try Self.enroll(harness, link, from: "127.0.0.21").status == 200)
        #expect(try Self.enroll(harness, link, from: "127.0.0.22").status == 429)
        // A device code is single-use anyway: no token bucket.
        for _ in 0..<4 { #expect(try Self.enroll(harness, try harness.code(.session("talk")), from: "127.0.0.50").status == 200) }
    }

    @Test func theDevicesOfATokenShareItsStreamCapAndAReconnectReplacesItsStream() throws {
        let harness = try SyncHarness(configure: { $0.deviceLimit = RateLimit(rate: 1000, burst: 1000) })
        try harness.seed(["talk"], series: "conf", state: .live)
        let link = try Self.token(harness, TokenLimits(maxStreams: 2))
        let devices = try (0..<3).map { _ in try harness.enroll(link) }
        let staffDevice = try harness.device(for: .session("talk"))
        let first = try EventReader(harness, device: devices[0], session: "talk")
        let second = try EventReader(harness, device: devices[1], session: "talk")
        #expect(first.head.status == 200 && second.head.status == 200)
        let refused = try EventReader(harness, device: devices[2], session: "talk")
        #expect(refused.head.status == 429 && refused.head.header("retry-after") == "30")
        #expect(harness.sync.hub.streamCount(token: CredentialSecret.listingId(hash: CredentialSecret.hash(link)!)) == 2)
        // The first device reconnects (its old stream not noticed gone yet): the new stream replaces the old one.
        let again = try EventReader(harness, device: devices[0], session: "talk")
        #expect(again.head.status == 200)
        #expect(try first.next(3).count == 2 && first.ended)  // its snapshot, then the end
        #expect(eventually(within: 2) { harness.sync.hub.streamCount(token: CredentialSecret.listingId(hash: CredentialSecret.hash(link)!)) == 2 })
        // A device code's device is not counted against the token.
        #expect(try EventReader(harness, device: staffDevice, session: "talk").head.status == 200)
        // When one of the token's streams ends (its device revoked), the third device gets its turn.
        try harness.administration.revokeDevice(id: devices[1].id)
        #expect(eventually(within: 5) { harness.sync.hub.streamCount(token: CredentialSecret.listingId(hash: CredentialSecret.hash(link)!)) == 1 })
        #expect(try EventReader(harness, device: devices[2], session: "talk").head.status == 200)
    }

    /// The attack at small scale: a leaked link's holder enrolls devices as fast as the server lets it, from
    /// many addresses, and opens four streams for each, against a server of 60 connections. Meanwhile real
    /// attendees (another link, and a staff device code) enroll, hold their streams, hear an advance and fetch
    /// their keys: every one of them is served. The listing shows the link's spike, and one revocation closes
    /// every stream the link's devices held.
    @Test func aLeakedLinkCannotStarveRealAttendees() throws {
        let harness = try SyncHarness(
            configure: {
                $0.enrollLimit = RateLimit(rate: 1000, burst: 1000)
                $0.deviceLimit = RateLimit(rate: 1000, burst: 1000)
                $0.tokenEnrollLimit = RateLimit(rate: 5, burst: 10)
                $0.tokenMaxStreams = 12
            },
            serverConfigure: { $0.maxConnections = 60 })
        try harness.seed(["talk"], series: "conf", state: .live)
        let leaked = try Self.token(harness)
        let attendeeLink = try Self.token(harness)
        let leakedId = CredentialSecret.listingId(hash: CredentialSecret.hash(leaked)!)
        let staff = try harness.staffToken()

        // The attacker: enroll, open four streams per device, keep them; until told to stop.
        let state = AttackState()
        let attacker = state.log
        let attack = Thread {
            var index = 0
            while !state.stopped {
                index += 1
                guard let key = try? P256.PrivateKey(),
                      let response = try? harness.client(source: "127.0.1.\(index % 200 + 1)").request(
                          "POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: leaked, key: key))
                else { continue }
                attacker.add(out: "enroll \(response.status)")
                guard response.status == 200, let id = response.json?["deviceId"]?.stringValue else { usleep(20_000); continue }
                let device = TestDevice(id: id, key: key)
                for _ in 0..<4 {
                    guard let stream = try? EventReader(harness, device: device, session: "talk") else { attacker.add(out: "stream none"); continue }
                    attacker.add(out: "stream \(stream.head.status)")
                    if stream.head.status == 200 { state.hold(stream) } else { stream.client.close() }
                }
            }
            state.finish()
        }
        attack.start()
        defer { state.stop() }
        // The attendees come once the attacker is held back by both limits: the stream cap and the link's
        // enrollment rate. The test clock stands still, so the bucket never refills: the eleventh attempt is
        // refused however slowly a loaded machine runs the attacker; waiting for it (not for a time) is what
        // makes this hold under load.
        #expect(eventually(within: 120) { attacker.out.filter { $0 == "stream 429" }.count >= 8 && attacker.out.contains("enroll 429") },
                "the attacker never met the link's limits: \(attacker.out.suffix(5))")

        // Real attendees arrive during the attack: they enroll, open a stream, fetch keys.
        var readers: [(TestDevice, EventReader)] = []
        for index in 0..<8 {
            let device = index < 6 ? try harness.enroll(attendeeLink) : try harness.device(for: .session("talk"))
            let reader = try EventReader(harness, device: device, session: "talk", timeout: 10)
            #expect(reader.head.status == 200, "attendee \(index): \(reader.head.status)")
            _ = try reader.next(2)  // state, manifest (no frontier yet)
            readers.append((device, reader))
        }
        #expect(harness.sync.hub.streamCount(token: leakedId) <= 12)
        let advance = try harness.client().request(
            "POST", "/api/staff/sessions/talk/advance", [("Authorization", "Bearer \(staff)")], body: Array(#"{"maxShown":3}"#.utf8))
        #expect(advance.status == 200)
        for (index, (device, reader)) in readers.enumerated() {
            let events = try reader.next(1)
            #expect(events.first?.name == "advance", "attendee \(index) heard \(events)")
            let keys = try harness.client().signed("GET", "/api/sync/keys?session=talk", by: device, at: harness.clock.seconds)
            #expect(keys.status == 200 && keys.json?["released"]?.arrayValue?.count == 4, "attendee \(index): \(keys.status)")
        }
        state.stop()
        #expect(state.waitUntilFinished(seconds: 20))
        #expect(attacker.out.contains("enroll 429"), "the link's enrollment rate never applied")
        #expect(harness.sync.hub.streamCount(token: leakedId) <= 12)

        // The listing shows the spike; one revocation cuts the link's devices and closes their streams.
        let listing = try #require(try harness.client().request("GET", "/api/staff/tokens", [("Authorization", "Bearer \(staff)")]).json?.arrayValue)
        let row = try #require(listing.first { $0["id"]?.stringValue == leakedId })
        let enrolled = attacker.out.filter { $0 == "enroll 200" }.count
        #expect(row["enrolledLastMinute"]?.intValue == enrolled && enrolled > 0)
        let revoked = try harness.client().request(
            "POST", "/api/staff/tokens/revoke", [("Authorization", "Bearer \(staff)")], body: JSONValue.object(["token": .string(leaked), "withDevices": true]).canonicalBytes)
        #expect(revoked.status == 200 && revoked.json?["devicesRevoked"]?.intValue == enrolled, "\(revoked.text)")
        #expect(eventually(within: 30) { harness.sync.hub.streamCount(token: leakedId) == 0 })
        // Every stream the link's devices held ends (a replaced one had ended before).
        for stream in state.held {
            while !stream.ended { _ = try stream.next(100) }
        }
        // The attendees' streams stay open and keep hearing.
        _ = try harness.client().request(
            "POST", "/api/staff/sessions/talk/advance", [("Authorization", "Bearer \(staff)")], body: Array(#"{"maxShown":4}"#.utf8))
        for (_, reader) in readers { #expect(try reader.next(1).first?.name == "advance") }
    }
}

extension TokenLimitTests {
    /// `POST /api/staff/registration-tokens` with the token's own limits: each stored as given, listed, and
    /// enforced (its rate across addresses, its stream cap); a value out of range or of another type is 400
    /// naming the field, and mints nothing.
    @Test func theStaffAPIMintsATokenWithItsOwnLimitsAndRefusesBadOnes() throws {
        let harness = try SyncHarness(configure: {
            $0.enrollLimit = RateLimit(rate: 1000, burst: 1000)
            $0.deviceLimit = RateLimit(rate: 1000, burst: 1000)
        })
        try harness.seed(["talk"], series: "conf", state: .live)
        let auth = [("Authorization", "Bearer \(try harness.staffToken())")]
        func mint(_ body: [UInt8]) throws -> RawHTTPResponse {
            try harness.client().request("POST", "/api/staff/registration-tokens", auth + [("Content-Type", "application/json")], body: body)
        }
        let minted = try mint(Array(#"{"series":"conf","enrollRate":1,"enrollBurst":2,"maxStreams":1}"#.utf8))
        #expect(minted.status == 201, "\(minted.text)")
        #expect(minted.json?["enrollRate"] == 1 && minted.json?["enrollBurst"] == 2 && minted.json?["maxStreams"] == 1, "\(minted.text)")
        let link = try #require(minted.json?["secret"]?.stringValue)
        let id = try #require(minted.json?["id"]?.stringValue)
        let stored = try #require(try harness.storage.credentials().first { $0.id == id })
        #expect(stored.limits == TokenLimits(enrollRate: 1, enrollBurst: 2, maxStreams: 1))
        let listed = try #require(try harness.client().request("GET", "/api/staff/tokens", auth).json?.arrayValue?.first { $0["id"]?.stringValue == id })
        #expect(listed["enrollRate"] == 1 && listed["enrollBurst"] == 2 && listed["maxStreams"] == 1, "\(listed)")

        // Enforced: a burst of 2 from two addresses, then 429 from a third; one more a second later.
        #expect(try Self.enroll(harness, link, from: "127.0.0.61").status == 200)
        #expect(try Self.enroll(harness, link, from: "127.0.0.62").status == 200)
        #expect(try Self.enroll(harness, link, from: "127.0.0.63").status == 429)
        harness.clock.advance(by: 1)
        #expect(try Self.enroll(harness, link, from: "127.0.0.64").status == 200)
        // One open stream for all its devices.
        harness.clock.advance(by: 1)
        let first = try harness.enroll(link)
        harness.clock.advance(by: 1)
        let second = try harness.enroll(link)
        let held = try EventReader(harness, device: first, session: "talk")
        #expect(held.head.status == 200)
        let refused = try EventReader(harness, device: second, session: "talk")
        #expect(refused.head.status == 429 && refused.head.header("retry-after") == "30")
        // Absent or null: serve's defaults (nothing stored).
        let plain = try mint(Array(#"{"series":"conf","enrollRate":null}"#.utf8))
        #expect(plain.status == 201 && plain.json?["enrollRate"] == nil && plain.json?["maxStreams"] == nil, "\(plain.text)")

        let before = try harness.storage.credentials().count
        let bad: [(field: String, value: String)] = [
            ("enrollRate", "0"), ("enrollRate", "-1"), ("enrollRate", "1000001"), ("enrollRate", "1.5"), ("enrollRate", "\"5\""),
            ("enrollRate", "true"), ("enrollRate", "[]"), ("enrollRate", "99999999999999999999"), ("enrollRate", "1e3"),
            ("enrollBurst", "0"), ("enrollBurst", "-5"), ("enrollBurst", "1000001"), ("enrollBurst", "{}"), ("enrollBurst", "\"x\""),
            ("maxStreams", "-1"), ("maxStreams", "1000001"), ("maxStreams", "2.5"), ("maxStreams", "\"1\""), ("maxStreams", "false"),
            ("maxStreams", "9223372036854775808"),
        ]
        for (field, value) in bad {
            let answer = try mint(Array(#"{"series":"conf","\#(field)":\#(value)}"#.utf8))
            let message = answer.json?["message"]?.stringValue ?? ""
            #expect(answer.status == 400 && answer.json?["error"] == "badRequest" && message.hasPrefix(field + " "), "\(field) \(value): \(answer.status) \(answer.text)")
        }
        #expect(try harness.storage.credentials().count == before, "a refused body minted a token")
    }

    /// The leaked link is the one real attendees use: the attacker takes the link's enrollment rate and its
    /// stream cap, so an attendee arriving with the link is refused. The documented recovery, end to end:
    /// revoke the link with its devices (the attendees' too), mint a new link, the attendees enroll again
    /// with it and are served (streams, an advance, keys), and every device of the old link is refused.
    @Test func aLeakedLinkSharedWithRealAttendeesIsRecoveredWithANewLink() throws {
        let harness = try SyncHarness(
            configure: {
                $0.enrollLimit = RateLimit(rate: 1000, burst: 1000)
                $0.deviceLimit = RateLimit(rate: 1000, burst: 1000)
                $0.tokenEnrollLimit = RateLimit(rate: 5, burst: 10)
                $0.tokenMaxStreams = 12
            },
            serverConfigure: { $0.maxConnections = 60 })
        try harness.seed(["talk"], series: "conf", state: .live)
        let staff = try harness.staffToken()
        let auth = [("Authorization", "Bearer \(staff)")]
        let link = try Self.token(harness)
        let linkId = CredentialSecret.listingId(hash: CredentialSecret.hash(link)!)

        // Three attendees enroll with the link before the attack; two open their streams, one later.
        let early = try (0..<3).map { _ in try harness.enroll(link) }
        let earlyStreams = try early.prefix(2).map { try EventReader(harness, device: $0, session: "talk") }
        #expect(earlyStreams.allSatisfy { $0.head.status == 200 })

        // The attacker has the same link: it enrolls as fast as it is let and opens four streams a device.
        let state = AttackState()
        let attacker = state.log
        let attack = Thread {
            var index = 0
            while !state.stopped {
                index += 1
                guard let key = try? P256.PrivateKey(),
                      let response = try? harness.client(source: "127.0.2.\(index % 200 + 1)").request(
                          "POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: link, key: key))
                else { continue }
                attacker.add(out: "enroll \(response.status)")
                guard response.status == 200, let id = response.json?["deviceId"]?.stringValue else { usleep(20_000); continue }
                let device = TestDevice(id: id, key: key)
                state.keep(device)
                for _ in 0..<4 {
                    guard let stream = try? EventReader(harness, device: device, session: "talk") else { continue }
                    attacker.add(out: "stream \(stream.head.status)")
                    if stream.head.status == 200 { state.hold(stream) } else { stream.client.close() }
                }
            }
            state.finish()
        }
        attack.start()
        defer { state.stop() }
        #expect(eventually(within: 10) { attacker.out.filter { $0 == "stream 429" }.count >= 8 && attacker.out.contains("enroll 429") },
                "the attacker never met the link's limits: \(attacker.out.suffix(5))")

        // The attack works against the link's own attendees: the third can open no stream, a fourth cannot enroll.
        let starved = try EventReader(harness, device: early[2], session: "talk")
        #expect(starved.head.status == 429 && starved.head.header("retry-after") == "30")
        #expect(try Self.enroll(harness, link, from: "127.0.0.90").status == 429)

        // The recovery: the link revoked with every device it enrolled, in one call (the attack goes on).
        let enrolledByLink = try harness.storage.credentials().first { $0.id == linkId }?.devicesEnrolled ?? -1
        let mark = attacker.out.count
        let revoked = try harness.client().request(
            "POST", "/api/staff/tokens/revoke", auth, body: JSONValue.object(["token": .string(link), "withDevices": true]).canonicalBytes)
        #expect(revoked.status == 200 && revoked.json?["devicesRevoked"]?.intValue == enrolledByLink, "\(revoked.text)")
        #expect(enrolledByLink == 3 + state.enrolled.count)
        #expect(eventually(within: 3) { harness.sync.hub.streamCount(token: linkId) == 0 })
        for stream in earlyStreams + state.held {
            while !stream.ended { _ = try stream.next(100) }
        }
        // A new link for the audience (the staff API, as the console mints one).
        let minted = try harness.client().request(
            "POST", "/api/staff/registration-tokens", auth, body: Array(#"{"series":"conf","maxStreams":12}"#.utf8))
        #expect(minted.status == 201)
        let newLink = try #require(minted.json?["secret"]?.stringValue)
        // Once the old link's bucket refills, its enrollments reach the token check: the flat 404, never a device.
        harness.clock.advance(by: 5)
        #expect(eventually(within: 5) { attacker.out.dropFirst(mark).contains("enroll 404") }, "\(attacker.out.suffix(3))")

        // The attendees enroll again with the new link and are served: a stream each, the advance, the keys.
        var readers: [(TestDevice, EventReader)] = []
        for index in 0..<4 {
            let device = try harness.enroll(newLink, name: "Attendee \(index)")
            let reader = try EventReader(harness, device: device, session: "talk", timeout: 10)
            #expect(reader.head.status == 200, "attendee \(index): \(reader.head.status)")
            _ = try reader.next(2)
            readers.append((device, reader))
        }
        let advance = try harness.client().request("POST", "/api/staff/sessions/talk/advance", auth, body: Array(#"{"maxShown":2}"#.utf8))
        #expect(advance.status == 200)
        for (index, (device, reader)) in readers.enumerated() {
            #expect(try reader.next(1).first?.name == "advance", "attendee \(index)")
            let keys = try harness.client().signed("GET", "/api/sync/keys?session=talk", by: device, at: harness.clock.seconds)
            #expect(keys.status == 200 && keys.json?["released"]?.arrayValue?.count == 3, "attendee \(index): \(keys.status)")
        }
        state.stop()
        #expect(state.waitUntilFinished(seconds: 20))
        #expect(!attacker.out.dropFirst(mark).contains("enroll 200"), "the revoked link enrolled a device")

        // Every device of the old link, the attacker's and the attendees' old ones, is refused: the flat 404.
        let flat = try harness.client().request("GET", "/api/sync/keys?session=talk").rawWithoutDate
        for device in state.enrolled + early {
            let keys = try harness.client().signed("GET", "/api/sync/keys?session=talk", by: device, at: harness.clock.seconds)
            #expect(keys.status == 404 && keys.rawWithoutDate == flat, "device \(device.id): \(keys.status)")
            let stream = try EventReader(harness, device: device, session: "talk")
            #expect(stream.head.status == 404)
        }
        #expect(harness.sync.hub.streamCount(token: linkId) == 0)
    }
}

/// The attacker thread's state, shared with the test.
final class AttackState: @unchecked Sendable {
    private let lock = NSLock()
    private var stopping = false
    private var streams: [EventReader] = []
    private var devices: [TestDevice] = []
    private let done = DispatchSemaphore(value: 0)
    let log = Lines()

    var stopped: Bool { lock.withLock { stopping } }
    func stop() { lock.withLock { stopping = true } }
    func hold(_ stream: EventReader) { lock.withLock { streams.append(stream) } }
    var held: [EventReader] { lock.withLock { streams } }
    func keep(_ device: TestDevice) { lock.withLock { devices.append(device) } }
    var enrolled: [TestDevice] { lock.withLock { devices } }
    func finish() { done.signal() }
    func waitUntilFinished(seconds: Double) -> Bool { done.wait(timeout: .now() + seconds) == .success }
}
