import Foundation
import PulseAnswerSignature
import PulseCore
import PulseCrypto
import Testing
@testable import PulseDevice

/// The sync with signed answers, against the in-memory server signing as pulse-server does: trust on first
/// use, refusals reported with the previous cache kept, rotation through an unknown kid, the server time.
@Suite struct SignedSyncTests {
    /// A signing server with session `a` (two slides) and a device that has learned its keys.
    static func signing() throws -> (FakeServer, FakeDevice) {
        let server = FakeServer()
        server.with { $0.answerKeys = [try! P256.PrivateKey()] }
        let slides = try (0..<2).map { _ in try server.putBlob(1000) }
        server.putManifest("session/a", ["deckVersion": 1, "slides": FakeServer.slides(slides)])
        let device = try FakeDevice(server)
        try AnswerGuard(folder: device.folder, client: device.client).learnKeys()
        return (server, device)
    }

    static func state(_ device: FakeDevice) throws -> AnswerState { try AnswerState.read(device.folder.answersURL) }

    @Test func aServerWithoutAnswerKeysIsRecordedAsNotSigningAndSyncsAsBefore() throws {
        let server = FakeServer()
        server.putManifest("session/a", ["deckVersion": 1, "slides": FakeServer.slides([try server.putBlob(100)])])
        let device = try FakeDevice(server)
        try AnswerGuard(folder: device.folder, client: device.client).learnKeys()
        #expect(try Self.state(device).signs == false)
        server.reset()
        let report = try device.sync(.session("a"))
        #expect(report.refusals.isEmpty && report.items.first?.outcome == .new)
        #expect(!server.requests.contains { $0.target == "/api/sync/time" }, "no clock read for a server that does not sign")
    }

    @Test func signedAnswersAreAcceptedAndRecorded() throws {
        let (server, device) = try Self.signing()
        let state = try Self.state(device)
        #expect(state.signs == true && state.keySetSeq == 1)
        server.with { $0.seq = 4; $0.now += 10 }
        let report = try device.sync(.session("a"))
        #expect(report.refusals.isEmpty && report.items.first?.outcome == .new)
        let after = try Self.state(device)
        #expect(after.answers["/api/sync/manifest?session=a"]?.seq == 4)
        #expect(after.verifiedTime == Int(server.with { $0.now }), "the iat of the key set and the manifest the sync verified")
        let info = try FileManager.default.attributesOfItem(atPath: device.folder.answersURL.path)
        #expect((info[.posixPermissions] as? Int) == 0o600)
        #expect(try device.sync(.session("a")).items.first?.outcome == .unchanged, "a signed 304 is accepted")
    }

    /// Each refusal leaves the previous version cached and usable, is reported with its rule, and a sync
    /// after the fault goes through again.
    @Test(arguments: ["signature", "binding", "rollback"])
    func aRefusedManifestIsReportedAndThePreviousCacheStays(rule: String) throws {
        let (server, device) = try Self.signing()
        server.with { $0.seq = 5 }
        _ = try device.sync(.session("a"))
        let v1 = try #require(try device.cache.sessionManifest("a"))
        server.putManifest("session/a", ["deckVersion": 2, "slides": FakeServer.slides([try server.putBlob(1000)])])
        server.with { server in
            switch rule {
            case "signature": server.tamper = { path, answer in if path == "/api/sync/manifest" { answer.headers["pulse-signature"] = nil } }
            case "rollback": server.seq = 4
            default: break
            }
        }
        if rule == "binding" {
            // The server's own key signs another session's answer for this request.
            let key = server.with { $0.answerKeys[0] }
            server.with { $0.tamper = { path, answer in
                guard path == "/api/sync/manifest" else { return }
                let version = answer.headers["etag"].map { String($0.dropFirst().dropLast()) }
                let claims = AnswerClaims(
                    route: path, query: "session=b", device: String(repeating: "a", count: 32), status: answer.status, seq: 6,
                    packageVersion: version, iat: 1_800_000_000, exp: 1_800_003_600)
                answer.headers["pulse-signature"] = try? AnswerSignature.sign(body: answer.body, claims: claims, key: key)
            } }
        }
        let report = try device.sync(.session("a"))
        let item = try #require(report.items.first)
        #expect(item.outcome == .refused && item.deckVersion == 1, "the report names the cached version still in use")
        #expect(report.refusals.count == 1 && report.refusals[0].contains("(rule \(rule))"), "\(report.refusals)")
        #expect(!report.refusals[0].contains("\n"))
        #expect(try device.cache.sessionManifest("a")?.bytes == v1.bytes)
        #expect(device.cache.check().isEmpty)
        server.with { $0.tamper = nil; $0.seq = 6 }
        #expect(try device.sync(.session("a")).items.first?.outcome == .updated)
    }

    @Test func anUnknownKidFetchesTheKeySetAgainSignedByTheTrustedKey() throws {
        let (server, device) = try Self.signing()
        server.with { $0.answerKeys.append(try! P256.PrivateKey()); $0.keySetSeq = 2 }
        // The key set read at the start of the sync fails once, so the new key is first met as an unknown kid.
        let failures = Counter()
        server.with { $0.tamper = { path, answer in
            if path == "/api/sync/answer-keys", failures.next() == 0 { answer = (503, [:], []) }
        } }
        let report = try device.sync(.session("a"))
        #expect(server.requests.filter { $0.target == "/api/sync/answer-keys" }.count == 3, "learnKeys, the failed refresh, the unknown kid")
        #expect(report.refusals.isEmpty, "\(report.refusals)")
        #expect(try AnswerCheck.trustedKeys(try Self.state(device)).count == 2)
        // A key set vouched for by nobody the device trusts is not taken.
        let stranger = try P256.PrivateKey()
        server.with { $0.answerKeys = [stranger]; $0.keySetSeq = 3 }
        server.putManifest("session/a", ["deckVersion": 2, "slides": FakeServer.slides([])])
        let refused = try device.sync(.session("a"))
        #expect(refused.refusals.first?.contains("(rule signature)") == true && refused.refusals.first?.contains("does not trust") == true,
            "\(refused.refusals)")
        #expect(try AnswerCheck.trustedKeys(try Self.state(device)).count == 2)
    }

    /// As pulse-server rotates: the new key is published at once, the old one signs answers and the key set
    /// until the switch, then the new one signs both. A device that synced in between follows; one that did
    /// not is shown a set signed by a key it never trusted and refuses it (it must enroll again).
    @Test func aRotationIsFollowedByADeviceThatSyncedDuringTheLead() throws {
        let (server, device) = try Self.signing()
        let late = try FakeDevice(server, name: "late")
        try AnswerGuard(folder: late.folder, client: late.client).learnKeys()
        server.with { $0.answerKeys.append(try! P256.PrivateKey()); $0.keySetSeq = 2; $0.answerSigner = 0; $0.keySetSigner = 0 }
        #expect(try device.sync(.session("a")).refusals.isEmpty)
        #expect(try AnswerCheck.trustedKeys(try Self.state(device)).count == 2, "the new key learned during the lead")
        server.with { $0.answerSigner = 1; $0.keySetSigner = 1; $0.seq = 2 }
        server.putManifest("session/a", ["deckVersion": 2, "slides": FakeServer.slides([try server.putBlob(10)])])
        let after = try device.sync(.session("a"))
        #expect(after.refusals.isEmpty && after.items.first?.outcome == .updated, "\(after.refusals)")
        let missed = try late.sync(.session("a"))
        #expect(missed.refusals.first?.contains("does not trust yet: enroll it again") == true, "\(missed.refusals)")
    }

    @Test func aFrozenAnswerIsRefusedOnceTheServerTimeHasPassedItsExpiry() throws {
        let (server, device) = try Self.signing()
        _ = try device.sync(.session("a"))
        // A proxy keeps answering with the 304 it saw, signed an hour and more ago.
        let recorded = Mutex304()
        server.with { $0.tamper = { path, answer in if path == "/api/sync/manifest" { recorded.replay(&answer) } } }
        _ = try device.sync(.session("a"))
        server.with { $0.now += 3700 }
        let report = try device.sync(.session("a"))
        #expect(report.refusals.first?.contains("(rule freeze)") == true, "\(report.refusals)")
        #expect(device.cache.check().isEmpty)
    }

    /// A sync reads `GET /api/sync/time` only when a signature is refused as stale, and what it reads there
    /// (unsigned: any box in the path can put it anywhere) is never recorded: ten years ahead, it costs the sync
    /// its requests (signed with that time, stale again) and nothing more.
    @Test func theTimeIsReadOnlyForAStaleSignatureAndNeverRecorded() throws {
        let (server, device) = try Self.signing()
        server.reset()
        #expect(try device.sync(.session("a")).refusals.isEmpty)
        #expect(!server.requests.contains { $0.target == "/api/sync/time" }, "no clock read while the signatures are fresh")
        server.with { server in
            server.now += 600
            server.tamper = { path, answer in if path == "/api/sync/time" { answer.body = Array("{\"unixSeconds\":\(1_800_000_000 + 315_360_000)}".utf8) } }
        }
        #expect(throws: DeviceError.self, "signed with the inflated time, refused as stale again") { try device.sync(.session("a")) }
        #expect(server.requests.contains { $0.target == "/api/sync/time" })
        #expect(try Self.state(device).verifiedTime == Int(server.with { $0.now }), "the key set's iat, not the time route's")
        server.with { $0.tamper = nil }
        let report = try device.sync(.session("a"))
        #expect(report.refusals.isEmpty && report.items.first?.outcome == .unchanged, "\(report.refusals)")
    }

    @Test func releasedKeysAreCheckedToo() throws {
        let (server, device) = try Self.signing()
        server.with { $0.keys["a"] = Array(#"{"deckVersion":1,"released":[]}"#.utf8) }
        let answers = AnswerGuard(folder: device.folder, client: device.client)
        #expect(try ReleasedKeys.fetch(session: "a", client: device.client, answers: answers).deckVersion == 1)
        server.with { $0.tamper = { path, answer in if path == "/api/sync/keys" { answer.body = Array(#"{"deckVersion":0,"released":[]}"#.utf8) } } }
        #expect { try ReleasedKeys.fetch(session: "a", client: device.client, answers: answers) } throws: { error in
            let device = error as? DeviceError
            return device?.kind == .integrity && device?.message.contains("(rule signature)") == true
        }
    }
}

/// Keeps the first manifest answer it sees and gives it back from then on.
final class Mutex304: @unchecked Sendable {
    private let lock = NSLock()
    private var kept: (status: Int, headers: [String: String], body: [UInt8])?
    func replay(_ answer: inout (status: Int, headers: [String: String], body: [UInt8])) {
        lock.withLock {
            if let kept { answer = kept } else { kept = answer }
        }
    }
}

/// Counts calls.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    /// The count before this call.
    func next() -> Int { lock.withLock { defer { value += 1 }; return value } }
}
