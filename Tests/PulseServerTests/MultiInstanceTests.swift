import Foundation
import PulseAnswerSignature
import PulseCore
import PulseCrypto
import PulsePostgres
import PulsePostgresTesting
import PulseSystem
import PulseTestSupport
import SyncTestSupport
import Testing
@testable import PulseServer
@testable import PulseServerStorage
@testable import PulseSyncAPI

/// Several real `pulse-server serve` processes on one PostgreSQL, behind a real nginx `upstream` holding them
/// all (`InstanceFleet`), as operators run them: what must hold across instances. The faults (kill -9, a
/// PostgreSQL restart, an older schema) are in MultiInstanceFaultTests.swift. One test at a time: each
/// starts three servers and nginx on a machine of two cores.
@Suite(.serialized) struct MultiInstanceTests {
    static func fleet(_ count: Int = 3, name: String = #function, dataFolders: [String?]? = nil) throws -> InstanceFleet {
        try InstanceFleet(try PostgresCluster.shared().createDatabase(String(name.prefix(12))), count: count, dataFolders: dataFolders, name: name)
    }

    static func storage(_ fleet: InstanceFleet) throws -> PostgresStorage {
        try PostgresStorage(configuration: fleet.database.configuration, connections: 2, watchChanges: false)
    }

    /// 1. Single-use stays single-use: 50 enrolls at once with one device code, spread by nginx over all
    /// three instances, make one device; 20 at once with a registration token capped at 3 make three.
    @Test func fiftyEnrollsWithOneCodeOverEveryInstanceMakeOneDeviceAndACapHolds() throws {
        let fleet = try Self.fleet()
        try fleet.seed(["talk"], series: "conf")
        let code = try fleet.deviceCode("talk")
        let answers = Lines()
        concurrently(50) { n in
            // Each from an address of its own: the per-address enroll limit is not what this checks.
            let response = try? fleet.client(source: "127.0.0.\(10 + n)")
                .request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: code, key: try P256.PrivateKey()))
            answers.add(out: "\(response?.status ?? 0)")
        }
        #expect(answers.out.filter { $0 == "200" }.count == 1)
        #expect(answers.out.filter { $0 == "404" }.count == 49, "\(answers.out)")
        let spread = fleet.spread("/api/sync/enroll")
        #expect(spread.reduce(0, +) == 50 && spread.allSatisfy { $0 > 0 }, "enrolls per instance: \(spread)")
        let storage = try Self.storage(fleet)
        #expect(try storage.devices().count == 1)

        let token = try #require(fleet.cli(["admin", "registration-token", "create", "--series", "conf", "--max-devices", "3"]).out.first)
        let capped = Lines()
        concurrently(20) { n in
            let response = try? fleet.client(source: "127.0.1.\(10 + n)")
                .request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: token, key: try P256.PrivateKey()))
            capped.add(out: "\(response?.status ?? 0)")
        }
        #expect(capped.out.filter { $0 == "200" }.count == 3 && capped.out.filter { $0 == "404" }.count == 17, "\(capped.out)")
        let hash = try #require(CredentialSecret.hash(token))
        #expect(try storage.credentials().first { $0.id == CredentialSecret.listingId(hash: hash) }?.devicesEnrolled == 3)
        #expect(try storage.devices().count == 4)
    }

    /// A body past pulse-server's 16 KB, sent through nginx, must not take instances out of the upstream: the
    /// server answers 413 and closes without reading it, and nginx, still sending, meets a reset, counts it as
    /// the instance failing (`max_fails=1`) and takes it out for `fail_timeout`. Three such requests (one per
    /// instance; no credential) made the whole fleet answer 502 for 10 s. nginx's own
    /// `client_max_body_size 16k` (docs/server-operations.md) refuses them before any instance sees them.
    @Test func bodiesPastTheLimitTakeNoInstanceOutOfTheUpstream() throws {
        let fleet = try Self.fleet()
        try fleet.seed(["talk"], series: "conf")
        let staff = try fleet.staffToken()
        let big = Array(repeating: UInt8(ascii: "["), count: 100_000)
        for round in 0..<6 {
            let enroll = try fleet.client().request("POST", "/api/sync/enroll", [("Content-Type", "application/json")], body: big)
            let advance = try fleet.client().request(
                "POST", "/api/staff/sessions/talk/advance", [("Authorization", "Bearer \(staff)"), ("Content-Type", "application/json")], body: big)
            #expect(enroll.status == 413 && advance.status == 413, "round \(round): \(enroll.status), \(advance.status)")
        }
        for index in 0..<6 {
            let answer = try fleet.client().request("GET", "/api/staff/sessions", [("Authorization", "Bearer \(staff)")])
            #expect(answer.status == 200, "request \(index) after the large bodies: \(answer.status)")
        }
        #expect(!fleet.nginx.errorLog.contains("temporarily disabled"), "\(fleet.nginx.errorLog.suffix(600))")
    }

    /// 2. One state: a change made through any instance is what every instance serves next (the very next
    /// request, with no wait for notifications); conflicting advances at once through all three end at the
    /// maximum, and a reader going round the instances meanwhile never sees the frontier go back.
    @Test func whatAnyInstanceChangesEveryInstanceServesNextAndTheFrontierNeverGoesBack() throws {
        let fleet = try Self.fleet()
        try fleet.seed(["talk"], slides: 40)
        let staff = try fleet.staffToken()
        let auth = [("Authorization", "Bearer \(staff)")]
        let devices = try (0..<8).map { _ in try fleet.enroll(try fleet.deviceCode("talk")) }
        var reads = 0
        func released(_ instance: Int) throws -> Int {
            reads += 1
            let response = try fleet.direct(instance).signed(
                "GET", "/api/sync/keys?session=talk", by: devices[reads % devices.count], at: InstanceFleet.now)
            try #require(response.status == 200, "\(response.status) \(response.text)")
            return try KeysReleaseWalkTests.released(response).count
        }
        for writer in 0..<3 {
            let shown = 3 * writer + 2
            let advance = try fleet.direct(writer).request(
                "POST", "/api/staff/sessions/talk/advance", auth, body: Array("{\"maxShown\":\(shown)}".utf8))
            #expect(advance.status == 200)
            for reader in 0..<3 { #expect(try released(reader) == shown + 1, "advance through \(writer), keys from \(reader)") }
        }
        let ended = try fleet.direct(1).request("POST", "/api/staff/sessions/talk", auth, body: Array(#"{"state":"ended","allowDownload":true}"#.utf8))
        #expect(ended.status == 200)
        for reader in 0..<3 { #expect(try released(reader) == 40, "ended with allowDownload, keys from \(reader)") }
        let live = try fleet.direct(2).request("POST", "/api/staff/sessions/talk", auth, body: Array(#"{"state":"live"}"#.utf8))
        #expect(live.status == 200)
        for reader in 0..<3 { #expect(try released(reader) == 9, "live again at frontier 8, keys from \(reader)") }

        // Conflicting advances at once, each instance getting a third of them; a reader goes round meanwhile.
        let targets = (0..<45).map { _ in Int.random(in: 9...39) }
        let seen = Lines()
        let done = Counter()
        let reader = Thread {
            var n = 0
            while done.value == 0 {
                n += 1
                let response = try? fleet.direct(n % 3).signed("GET", "/api/sync/keys?session=talk", by: devices[n % devices.count], at: InstanceFleet.now)
                if let response, response.status == 200, let count = try? KeysReleaseWalkTests.released(response).count { seen.add(out: "\(count)") }
            }
        }
        reader.start()
        concurrently(targets.count) { n in
            _ = try? fleet.direct(n % 3).request("POST", "/api/staff/sessions/talk/advance", auth, body: Array("{\"maxShown\":\(targets[n])}".utf8))
        }
        done.add()
        let frontiers = seen.out.compactMap(Int.init)
        #expect(frontiers == frontiers.sorted(), "a reader saw the frontier go back: \(frontiers)")
        for instance in 0..<3 { #expect(try released(instance) == targets.max()! + 1) }
        #expect(try Self.storage(fleet).session(id: "talk")?.maxShown == targets.max())
    }

    /// 3. Advances reach every stream: streams held by B and C (and one through nginx) receive each advance made
    /// through A, woken by the notification; the latency is measured over 30 advances.
    @Test func anAdvanceThroughOneInstanceReachesTheStreamsTheOthersHoldWithinASecond() throws {
        let fleet = try Self.fleet()
        try fleet.seed(["talk"], slides: 40)
        let staff = try fleet.staffToken()
        let device = try fleet.enroll(try fleet.deviceCode("talk"))
        let streams = [
            try EventReader(try fleet.direct(1), device: device, session: "talk", at: InstanceFleet.now),
            try EventReader(try fleet.direct(2), device: device, session: "talk", at: InstanceFleet.now),
            try EventReader(try fleet.client(), device: device, session: "talk", at: InstanceFleet.now),
        ]
        for stream in streams {
            #expect(stream.head.status == 200)
            _ = try stream.next(2)  // the snapshot: state and manifest
        }
        let writer = try fleet.direct(0)
        var latencies: [Double] = []
        for slide in 1...30 {
            let started = Date()
            let advance = try writer.request(
                "POST", "/api/staff/sessions/talk/advance", [("Authorization", "Bearer \(staff)")], body: Array("{\"maxShown\":\(slide)}".utf8))
            #expect(advance.status == 200)
            for stream in streams {
                let event = try stream.next().first
                #expect(event?.name == "advance" && event?.data == ["maxShown": .int(slide), "deckVersion": 1])
                latencies.append(Date().timeIntervalSince(started))
            }
        }
        let sorted = latencies.sorted()
        let p50 = sorted[sorted.count / 2], p99 = sorted[Int(Double(sorted.count - 1) * 0.99)]
        print("advance through instance A to streams on B, C and behind nginx (\(sorted.count) deliveries): "
            + "p50 \(String(format: "%.1f", p50 * 1000)) ms, p99 \(String(format: "%.1f", p99 * 1000)) ms, max \(String(format: "%.1f", sorted.last! * 1000)) ms")
        #expect(sorted.last! < 1)
    }

    /// 4. Rate limits and replay protection are per device, not per instance: one device spraying requests
    /// through nginx (round robin over three instances) meets one bucket of 5 a second, bursts of 10, and gets
    /// 429s with Retry-After; a signed POST answered by one instance is refused by the others.
    @Test func aDeviceMeetsOneRateLimitOverEveryInstanceAndAReplayIsRefusedByTheOthers() throws {
        let fleet = try Self.fleet()
        try fleet.seed(["talk"])
        let device = try fleet.enroll(try fleet.deviceCode("talk"))
        let client = try fleet.client()
        let started = Date()
        var statuses: [Int] = []
        // Two requests every 0.1 s for three seconds: 20 a second against a limit of 5.
        while Date().timeIntervalSince(started) < 3 {
            let response = try client.signed("GET", "/api/sync/keys?session=talk", by: device, at: InstanceFleet.now)
            statuses.append(response.status)
            if response.status == 429 { #expect(Int(response.header("retry-after") ?? "") ?? 0 >= 1) }
            if statuses.count % 2 == 0 { usleep(100_000) }
        }
        let elapsed = Date().timeIntervalSince(started)
        let allowed = statuses.filter { $0 == 200 }.count
        #expect(statuses.allSatisfy { $0 == 200 || $0 == 429 })
        // The burst of 10, then 5 a second: one bucket. (Three buckets, one per instance, would allow 3 times that.)
        #expect(allowed >= 10 + Int(4 * elapsed) && allowed <= 11 + Int((5 * elapsed).rounded(.up)), "\(allowed) allowed of \(statuses.count) in \(elapsed) s")
        let spread = fleet.spread("/api/sync/keys")
        #expect(spread.allSatisfy { $0 > 5 }, "key fetches per instance: \(spread)")
        print("one device, \(statuses.count) requests in \(String(format: "%.1f", elapsed)) s over 3 instances \(spread): \(allowed) allowed (\(String(format: "%.1f", Double(allowed - 10) / elapsed))/s after the burst of 10)")

        usleep(2_100_000)  // the bucket refills: a refused request was never recorded, so the next ones pass
        let body = Array(#"{"build":"2.4.1","online":true,"platform":"ios"}"#.utf8)
        let header = try device.header("POST", "/api/sessions/talk/diag", body: body, at: InstanceFleet.now)
        #expect(try fleet.direct(0).request("POST", "/api/sessions/talk/diag", [("X-Pulse-Device", header)], body: body).status == 204)
        for instance in 1..<3 {
            let replay = try fleet.direct(instance).request("POST", "/api/sessions/talk/diag", [("X-Pulse-Device", header)], body: body)
            #expect(replay.status == 404 && replay.text == #"{"error":"notFound"}"#)
        }
        #expect(try fleet.client().request("POST", "/api/sessions/talk/diag", [("X-Pulse-Device", header)], body: body).status == 404)
        #expect(try Self.storage(fleet).samples(sessionId: "talk").count == 1)
    }

    /// 6. The device certificate key is shared: two instances start with different keys in their data folders
    /// (as part 1's operators may have left them), a third with none. Every instance signs with the same key
    /// (the oldest in the database) and publishes every key, so a certificate from any instance, or from the
    /// single box a key came from, verifies; a key adopted later by another instance is published by all.
    @Test func everyInstanceSignsWithOneKeyAndPublishesEveryKey() throws {
        let folders = try TestFolder()
        let keyed = try (0..<3).map { n in try DataFolder.prepare(folders.url.appendingPathComponent("data-\(n)").path) }
        let keys = try keyed.map { try DeviceCertificateKey.loadOrCreate(in: $0) }
        let fleet = try Self.fleet(dataFolders: [keyed[0].url.path, keyed[1].url.path, nil])
        try fleet.seed(["talk"])
        func published(_ client: RawHTTPConnection) throws -> [String: P256.PublicKey] {
            let response = try client.request("GET", "/api/sync/device-cert-keys")
            #expect(response.status == 200 && response.header("cache-control") == "public, max-age=300")
            var found: [String: P256.PublicKey] = [:]
            for jwk in try #require(response.json?["keys"]?.arrayValue) {
                let x = try #require(Base64URL.decode(jwk["x"]?.stringValue ?? "")), y = try #require(Base64URL.decode(jwk["y"]?.stringValue ?? ""))
                found[try #require(jwk["kid"]?.stringValue)] = try P256.PublicKey(x963Representation: [4] + x + y)
            }
            return found
        }
        let sets = try (0..<3).map { try published(fleet.direct($0)) }
        #expect(Set(sets.map { $0.keys.sorted() }).count == 1, "instances publish different sets: \(sets.map { $0.keys.sorted() })")
        let set = sets[0]
        #expect(set[keys[0].keyId] != nil && set[keys[1].keyId] != nil && (2...3).contains(set.count))

        var signers: Set<String> = []
        for _ in 0..<6 {
            let key = try P256.PrivateKey()
            let response = try fleet.client().request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: try fleet.deviceCode("talk"), key: key))
            let certificate = try #require(response.json?["deviceCert"]?.stringValue)
            let kid = try #require(Base64URL.decode(String(certificate.prefix { $0 != "." })).flatMap { try? JSONValue.parse(Data($0)) }?["kid"]?.stringValue)
            signers.insert(kid)
            #expect(DeviceCertificate.verify(certificate, publicKey: try #require(set[kid])) != nil)
        }
        #expect(signers.count == 1 && fleet.spread("/api/sync/enroll").allSatisfy { $0 > 0 }, "signers \(signers), enrolls \(fleet.spread("/api/sync/enroll"))")
        // A certificate the single box with the first key had issued still verifies.
        let record = DeviceRecord(
            id: String(repeating: "a", count: 32), publicKey: try P256.PrivateKey().publicKey.derRepresentation, platform: "ios", name: "Old phone",
            scope: .session("talk"), enrolledAt: 1_700_000_000, revokedAt: nil, credentialId: "000000000000")
        let old = try DeviceCertificate.issue(for: record, key: keys[0], issuedAt: record.enrolledAt)
        #expect(DeviceCertificate.verify(old, publicKey: try #require(set[keys[0].keyId])) != nil)

        // An instance started later with yet another key adopts it; the running ones publish it at once.
        let late = try ServerProcess(data: keyed[2].url.path, ["--access-log", "off"], environment: fleet.environment)
        #expect(try published(late.client())[keys[2].keyId] != nil)
        for instance in 0..<3 {
            #expect(eventually(within: 2) { ((try? published(fleet.direct(instance)))?[keys[2].keyId]) != nil }, "instance \(instance)")
        }
        late.signal(SIGTERM)
        #expect(late.waitForExit(within: 15) == 0)
    }

    /// An enrollment whose answer was lost (the client or a proxy gave up after the server committed) is asked
    /// again through nginx, landing on any instance: the same device, a valid certificate, the code spent once.
    @Test func aLostEnrollmentAnswerAskedAgainOnAnotherInstanceGetsTheSameDevice() throws {
        let fleet = try Self.fleet(2)
        try fleet.seed(["talk"])
        let code = try fleet.deviceCode("talk")
        let key = try P256.PrivateKey()
        let body = TestDevice.enrollBody(token: code, key: key)
        do {
            // Sent to instance 0, and the connection closed before the answer: it commits all the same.
            let gone = try fleet.direct(0)
            try gone.send(Array("POST /api/sync/enroll HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
        }
        let storage = try Self.storage(fleet)
        #expect(eventually(within: 10) { ((try? storage.devices()) ?? []).count == 1 })
        let made = try #require(try storage.devices().first)
        for _ in 0..<2 {  // round robin: one of these lands on the other instance
            let again = try fleet.client().request("POST", "/api/sync/enroll", body: body)
            #expect(again.status == 200 && again.json?["deviceId"]?.stringValue == made.id, "\(again.status) \(again.text)")
        }
        let other = try fleet.client().request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: code, key: try P256.PrivateKey()))
        #expect(other.status == 404)  // the code is spent: another key gets nothing
        #expect(try storage.devices().count == 1)
        // Each instance answered one of the two (round robin) from the device the first made.
        #expect(eventually(within: 2) { (0..<2).allSatisfy { fleet.accessLog($0).filter { $0.contains("enrolled:again") }.count == 1 } },
                "\(fleet.accessLog(0) + fleet.accessLog(1))")
    }

    /// Signed answers across instances (issue 21): two real `serve` processes on one database, started with
    /// `--answer-ttl 600`, record that TTL with the key, publish one key set (the same single key id), and each
    /// one's signed answers verify with it. After `admin answer-key rotate --lead 3` (in a shell, on neither
    /// instance) both publish the new key at once, beside the old one, and once the lead has passed both sign
    /// with the new key: answers that verify with it alone.
    @Test func twoInstancesSignWithOneKeyAndBothFollowARotation() throws {
        let fleet = try InstanceFleet(
            try PostgresCluster.shared().createDatabase("answerkeys2"), count: 2, arguments: ["--answer-ttl", "600"])
        try fleet.seed(["talk"])
        let devices = try (0..<2).map { _ in try fleet.enroll(try fleet.deviceCode("talk")) }
        func keySet(_ n: Int) throws -> [AnswerKey] {
            let response = try fleet.direct(n).request("GET", "/api/sync/answer-keys")
            try #require(response.status == 200, "\(response.status) \(response.text)")
            let keys = try AnswerKeySet.parse(response.body)
            let claims = try AnswerSignature.verify(header: try #require(response.header("pulse-signature")), body: response.body, keys: keys)
            #expect(claims.route == "/api/sync/answer-keys" && claims.exp - claims.iat == 600)
            return keys
        }
        func answer(_ n: Int, verifiedBy keys: [AnswerKey]) throws -> AnswerClaims {
            let response = try fleet.direct(n).signed("GET", "/api/sync/keys?session=talk", by: devices[n], at: InstanceFleet.now)
            try #require(response.status == 200, "\(response.status) \(response.text)")
            return try AnswerSignature.verify(header: try #require(response.header("pulse-signature")), body: response.body, keys: keys)
        }
        let published = try (0..<2).map(keySet)
        let first = try #require(published[0].first)
        #expect(published[0].count == 1 && published.map { $0.map(\.kid) } == [[first.kid], [first.kid]], "one key, the same on both")
        for n in 0..<2 {
            let claims = try answer(n, verifiedBy: [first])
            #expect(claims.kid == first.kid && claims.device == devices[n].id && claims.exp - claims.iat == 600)
        }
        let storage = try Self.storage(fleet)
        #expect(try storage.answerKeys().map(\.ttl) == [600], "each instance recorded its TTL with the key")

        let rotated = fleet.cli(["admin", "answer-key", "rotate", "--lead", "3"])
        let kid = try #require(rotated.out.first, "\(rotated.text)")
        #expect(eventually(within: 5) { (0..<2).allSatisfy { n in ((try? keySet(n)) ?? []).map(\.kid) == [first.kid, kid] } },
                "both publish the new key at once, beside the old one")
        let next = try #require(try keySet(0).first { $0.kid == kid })
        #expect(try keySet(0).first?.retiresAt == Int(next.signsFrom) + 600, "the old key retires when its last answer expires")
        for n in 0..<2 { #expect(try answer(n, verifiedBy: [first]).kid == first.kid, "during the lead the old key signs") }
        Thread.sleep(forTimeInterval: 3.5)
        for n in 0..<2 {
            let claims = try answer(n, verifiedBy: [next])
            #expect(claims.kid == kid, "instance \(n) signs with the new key once the lead has passed")
            #expect(try keySet(n).map(\.kid) == [first.kid, kid])
        }
    }
}

/// Runs `body(n)` for n in 0..<count on threads of their own, released together; returns when all are done.
func concurrently(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    let start = DispatchSemaphore(value: 0)
    for n in 0..<count {
        group.enter()
        Thread {
            start.wait()
            body(n)
            group.leave()
        }.start()
    }
    for _ in 0..<count { start.signal() }
    group.wait()
}
