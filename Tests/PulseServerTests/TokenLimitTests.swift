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
        #expect(eventually(within: 10) { attacker.out.filter { $0 == "stream 429" }.count >= 8 }, "the attacker never met the cap: \(attacker.out.suffix(5))")

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
        #expect(eventually(within: 3) { harness.sync.hub.streamCount(token: leakedId) == 0 })
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

/// The attacker thread's state, shared with the test.
final class AttackState: @unchecked Sendable {
    private let lock = NSLock()
    private var stopping = false
    private var streams: [EventReader] = []
    private let done = DispatchSemaphore(value: 0)
    let log = Lines()

    var stopped: Bool { lock.withLock { stopping } }
    func stop() { lock.withLock { stopping = true } }
    func hold(_ stream: EventReader) { lock.withLock { streams.append(stream) } }
    var held: [EventReader] { lock.withLock { streams } }
    func finish() { done.signal() }
    func waitUntilFinished(seconds: Double) -> Bool { done.wait(timeout: .now() + seconds) == .success }
}
