import Foundation
import PulseAnswerSignature
import PulseCore
import PulseCrypto
import PulseSystem
import PulseTestSupport
import Testing
@testable import PulseServer
@testable import PulseServerStorage
@testable import PulseSyncAPI
import PulseHTTPServer

/// `Pulse-Signature` off the wire (issue 21): every signed route's answer, 200 and 304, verifies with the key
/// `GET /api/sync/answer-keys` publishes and binds the request it answers; `seq` rises with the session's
/// changes; an error answer carries none; an unchanged answer is not signed again until half its TTL passed.
@Suite struct SignedAnswerTests {
    static func harness(_ name: String = #function) throws -> SyncHarness {
        let harness = try SyncHarness(name, configure: { $0.deviceLimit = RateLimit(rate: 1000, burst: 1000) })
        try harness.seed(["talk", "lab"], slides: 6, series: "conf")
        return harness
    }

    /// The published answer keys, checked against their own signature.
    static func answerKeys(_ harness: SyncHarness) throws -> [AnswerKey] {
        let response = try harness.client().request("GET", "/api/sync/answer-keys")
        #expect(response.status == 200)
        let keys = try AnswerKeySet.parse(response.body)
        let header = try #require(response.header("pulse-signature"))
        let claims = try AnswerSignature.verify(header: header, body: response.body, keys: keys)
        #expect(claims.route == "/api/sync/answer-keys" && claims.query == "" && claims.device == "" && claims.status == 200)
        return keys
    }

    /// The claims of `response`, verified.
    static func claims(_ response: RawHTTPResponse, _ keys: [AnswerKey]) throws -> AnswerClaims {
        let header = try #require(response.header("pulse-signature"), "no Pulse-Signature on a \(response.status)")
        return try AnswerSignature.verify(header: header, body: response.body, keys: keys)
    }

    @Test func everySignedRouteBindsItsRequest() throws {
        let harness = try Self.harness()
        let keys = try Self.answerKeys(harness)
        let device = try harness.device(for: .series("conf"))
        let client = try harness.client()
        let now = harness.clock.seconds
        let session = try #require(try harness.storage.session(id: "talk"))

        let manifest = try client.signed("GET", "/api/sync/manifest?session=talk", by: device, at: now)
        let version = try #require(manifest.json?["packageVersion"]?.stringValue)
        let m = try Self.claims(manifest, keys)
        #expect(m.route == "/api/sync/manifest" && m.query == "session=talk" && m.device == device.id && m.status == 200)
        #expect(m.seq == Int(session.changeSequence) && m.packageVersion == version && m.deckVersion == nil)
        #expect(m.iat == Int(now) && m.exp == Int(now) + 3600 && m.kid == keys.first?.kid)

        let notModified = try client.signed("GET", "/api/sync/manifest?session=talk", by: device, at: now, headers: [("If-None-Match", "\"\(version)\"")])
        #expect(notModified.status == 304)
        let n = try Self.claims(notModified, keys)
        #expect(n.status == 304 && n.packageVersion == version && n.route == "/api/sync/manifest" && n.device == device.id)

        let keysAnswer = try client.signed("GET", "/api/sync/keys?session=talk", by: device, at: now)
        #expect(keysAnswer.status == 200)
        let k = try Self.claims(keysAnswer, keys)
        #expect(k.route == "/api/sync/keys" && k.query == "session=talk" && k.deckVersion == keysAnswer.json?["deckVersion"]?.intValue)
        #expect(k.packageVersion == nil && k.seq == Int(session.changeSequence))

        let series = try client.signed("GET", "/api/sync/series/conf/manifest", by: device, at: now)
        #expect(series.status == 200)
        let s = try Self.claims(series, keys)
        #expect(s.route == "/api/sync/series/conf/manifest" && s.query == "" && s.device == device.id)
        #expect(s.packageVersion == series.json?["packageVersion"]?.stringValue)

        // Another device's answer is bound to it, not to this one.
        let other = try harness.device(for: .session("talk"))
        let theirs = try Self.claims(try client.signed("GET", "/api/sync/manifest?session=talk", by: other, at: now), keys)
        #expect(theirs.device == other.id && theirs.device != device.id)
        // An altered body does not verify.
        var altered = manifest.body
        altered[altered.count / 2] ^= 1
        #expect(throws: AnswerSignatureError.self) {
            try AnswerSignature.verify(header: manifest.header("pulse-signature") ?? "", body: altered, keys: keys)
        }
    }

    @Test func seqRisesAfterAnAdvance() throws {
        let harness = try Self.harness()
        let keys = try Self.answerKeys(harness)
        _ = try harness.storage.updateSession(id: "talk", SessionUpdate(state: .live, maxShown: 0), at: harness.clock.seconds)
        let device = try harness.device(for: .series("conf"))
        let client = try harness.client()
        func fetch(_ target: String) throws -> AnswerClaims {
            try Self.claims(try client.signed("GET", target, by: device, at: harness.clock.seconds), keys)
        }
        let keys0 = try fetch("/api/sync/keys?session=talk"), manifest0 = try fetch("/api/sync/manifest?session=talk")
        let series0 = try fetch("/api/sync/series/conf/manifest")
        _ = try harness.storage.advance(sessionId: "talk", to: 3, at: harness.clock.seconds)
        let keys1 = try fetch("/api/sync/keys?session=talk"), manifest1 = try fetch("/api/sync/manifest?session=talk")
        let series1 = try fetch("/api/sync/series/conf/manifest")
        #expect(keys1.seq > keys0.seq && manifest1.seq > manifest0.seq && series1.seq > series0.seq)
        #expect(keys1.seq == Int(try #require(try harness.storage.session(id: "talk")).changeSequence))
    }

    @Test func errorAnswersAreNotSigned() throws {
        let harness = try Self.harness()
        let device = try harness.device(for: .session("talk"))
        let client = try harness.client()
        let now = harness.clock.seconds
        let answers = [
            try client.signed("GET", "/api/sync/manifest?session=lab", by: device, at: now),  // not entitled: 404
            try client.signed("GET", "/api/sync/keys?session=nope", by: device, at: now),
            try client.signed("GET", "/api/sync/series/conf/manifest", by: device, at: now),
            try client.signed("GET", "/api/sync/manifest?session=talk", by: device, at: now - 3600),  // stale: 401
            try client.request("GET", "/api/sync/manifest?session=talk"),  // unsigned request: 404
            try client.request("POST", "/api/sync/answer-keys"),  // 405
        ]
        for answer in answers {
            #expect(answer.status >= 400, "\(answer.status)")
            #expect(answer.header("pulse-signature") == nil, "\(answer.status)")
        }
    }

    @Test func anUnchangedAnswerIsSignedAgainOnlyAfterHalfItsTTL() throws {
        let harness = try Self.harness()
        let keys = try Self.answerKeys(harness)
        let device = try harness.device(for: .session("talk"))
        let client = try harness.client()
        func header() throws -> String {
            let response = try client.signed("GET", "/api/sync/keys?session=talk", by: device, at: harness.clock.seconds)
            _ = try Self.claims(response, keys)
            return try #require(response.header("pulse-signature"))
        }
        let first = try header()
        harness.clock.advance(by: 1799)
        #expect(try header() == first)  // ES256 signatures are randomized: equal means not signed again
        harness.clock.advance(by: 1)
        let renewed = try header()
        #expect(renewed != first)
        let claims = try AnswerSignature.verify(header: renewed, body: try client.signed(
            "GET", "/api/sync/keys?session=talk", by: device, at: harness.clock.seconds).body, keys: keys)
        #expect(claims.iat == Int(harness.clock.seconds))
    }

    @Test func theTTLIsTheConfigured() throws {
        let harness = try SyncHarness(configure: { $0.answerTTL = 120 })
        try harness.seed(["talk"])
        let keys = try Self.answerKeys(harness)
        let device = try harness.device(for: .session("talk"))
        let claims = try Self.claims(try harness.client().signed("GET", "/api/sync/manifest?session=talk", by: device, at: harness.clock.seconds), keys)
        #expect(claims.exp - claims.iat == 120)
    }

    @Test func aServerThatDoesNotSignSendsNoHeader() throws {
        let harness = try SyncHarness(configure: { $0.signAnswers = false })
        try harness.seed(["talk"])
        let device = try harness.device(for: .session("talk"))
        let response = try harness.client().signed("GET", "/api/sync/manifest?session=talk", by: device, at: harness.clock.seconds)
        #expect(response.status == 200 && response.header("pulse-signature") == nil)
        #expect(try harness.client().request("GET", "/api/sync/answer-keys").status == 404)
    }

    @Test func aScheduledKeyTakesOverFromACachedSignatureAndBodiesAreShared() throws {
        let old = try P256.PrivateKey(), new = try P256.PrivateKey()
        let records = [
            AnswerKeyRecord(privateKey: old, signsFrom: 0, signsUntil: 1000, serial: 1),
            AnswerKeyRecord(privateKey: new, signsFrom: 1000, signsUntil: nil, serial: 2),
        ]
        let signer = AnswerSigner(keyring: try AnswerKeyring(loading: { records }), ttl: 3600)
        let trusted = AnswerKeyring.published(records, at: 900, ttl: 3600).keys
        let body = Array("{\"deckVersion\":1,\"released\":[]}\n".utf8)
        let response = HTTPResponse(status: 200, headers: [SyncAPI.jsonType], body: .bytes(body))
        func sign(_ device: String, at now: Int64) throws -> (AnswerClaims, HTTPResponse) {
            let binding = AnswerSigner.Binding(route: "/api/sync/keys", query: "session=a", device: device, status: 200, seq: 1, deckVersion: 1)
            let signed = try signer.signed(response, binding, at: now, generation: StorageGeneration(0))
            let header = try #require(signed.header("Pulse-Signature"))
            guard case let .buffer(buffer, offset, count) = signed.body else { throw RawHTTPConnection.Failure("not a shared buffer") }
            #expect(buffer[offset..<(offset + count)] == body)
            return (try AnswerSignature.verify(header: header, body: body, keys: trusted), signed)
        }
        let (before, first) = try sign("d1", at: 900)
        #expect(before.kid == old.publicKey.jwkThumbprint)
        // Within half the TTL, but the schedule moved to the new key: signed again, by it.
        let (after, _) = try sign("d1", at: 1000)
        #expect(after.kid == new.publicKey.jwkThumbprint && after.iat == 1000)
        // Another device, the same body: its own signature, one buffer.
        let (other, second) = try sign("d2", at: 1000)
        #expect(other.device == "d2")
        if case let .buffer(a, _, _) = first.body, case let .buffer(b, _, _) = second.body { #expect(a === b) }
        #expect(signer.cachedCount == 2)
    }

    /// A device chooses its query, and each distinct query is an answer of its own (its claims bind it): with
    /// 4 KB queries, every entry holds 8 KB and more (the query in its key and again in its header). The cache
    /// counts those bytes, not only the shared bodies, so its budget bounds it (before, 1,000 such entries were
    /// kept under a 1 MB budget, the one body being all it counted).
    @Test func theCacheCountsEachEntrysBytesAgainstItsBudget() throws {
        let key = try P256.PrivateKey()
        let records = [AnswerKeyRecord(privateKey: key, signsFrom: 0, signsUntil: nil, serial: 1)]
        let budget = 1 << 20
        let signer = AnswerSigner(keyring: try AnswerKeyring(loading: { records }), ttl: 3600, maxBytes: budget)
        let body = Array("{\"deckVersion\":1,\"released\":[]}\n".utf8)
        let response = HTTPResponse(status: 200, headers: [SyncAPI.jsonType], body: .bytes(body))
        let padding = String(repeating: "x", count: 4096)
        for index in 0..<1000 {
            let binding = AnswerSigner.Binding(
                route: "/api/sync/keys", query: "session=a&\(padding)=\(index)", device: "d1", status: 200, seq: 1, deckVersion: 1)
            _ = try signer.signed(response, binding, at: 100, generation: StorageGeneration(0))
            #expect(signer.cachedBytes <= budget)
        }
        #expect(signer.cachedCount > 0 && signer.cachedCount * 8192 <= budget, "\(signer.cachedCount) entries of 8 KB and more under \(budget) bytes")
        // An answer signed again after half its TTL replaces its entry: the count of bytes does not creep.
        let again = AnswerSigner(keyring: try AnswerKeyring(loading: { records }), ttl: 3600, maxBytes: budget)
        let binding = AnswerSigner.Binding(route: "/api/sync/keys", query: "session=a", device: "d2", status: 200, seq: 1, deckVersion: 1)
        _ = try again.signed(response, binding, at: 100, generation: StorageGeneration(0))
        let held = again.cachedBytes
        for turn in 1...20 { _ = try again.signed(response, binding, at: 100_000 + Int64(turn) * 1800, generation: StorageGeneration(0)) }
        #expect(again.cachedCount == 1 && abs(again.cachedBytes - held) < 16, "\(held) → \(again.cachedBytes)")
    }

    /// A body the cache holds already (one keys answer sent to every device) costs only the new entry's own
    /// bytes, so signing it for one more device keeps every signature held. (It used to start over whenever
    /// the budget plus the body's size was exceeded, stored or not: with a deck's keys answer near the budget,
    /// every device's fetch threw away every other device's signature.) A new body over the budget still
    /// starts over, as does a new answer when the entries are full.
    @Test func aBodyHeldAlreadyNeverEmptiesTheCache() throws {
        let key = try P256.PrivateKey()
        // One entry's own bytes (its binding and header), measured on a cache of its own.
        let probe = AnswerSigner(keyring: AnswerKeyring(key), ttl: 3600)
        let probeBinding = AnswerSigner.Binding(route: "/api/sync/keys", query: "session=a", device: "d0", status: 200, seq: 1, deckVersion: 1)
        _ = try probe.signed(HTTPResponse(status: 200, body: .bytes([UInt8](repeating: 0x61, count: 60))), probeBinding, at: 1000, generation: StorageGeneration(0))
        let entry = probe.cachedBytes - 60
        // Room for one body of 60 bytes and four entries, not for a second body besides.
        let signer = AnswerSigner(keyring: AnswerKeyring(key), ttl: 3600, maxEntries: 4, maxBytes: 60 + 4 * entry + 30)
        func sign(_ device: String, _ body: [UInt8]) throws {
            let binding = AnswerSigner.Binding(route: "/api/sync/keys", query: "session=a", device: device, status: 200, seq: 1, deckVersion: 1)
            _ = try signer.signed(HTTPResponse(status: 200, body: .bytes(body)), binding, at: 1000, generation: StorageGeneration(0))
        }
        let keys = [UInt8](repeating: 0x61, count: 60)
        try sign("d1", keys)
        try sign("d2", keys)
        try sign("d3", keys)
        #expect(signer.cachedCount == 3, "one body of 60 bytes for three devices, under the budget")
        try sign("d4", [UInt8](repeating: 0x62, count: 60))
        #expect(signer.cachedCount == 1, "a second body of 60 bytes is over the budget: started over")
        try sign("d5", [UInt8](repeating: 0x62, count: 60))
        try sign("d6", [UInt8](repeating: 0x62, count: 60))
        try sign("d7", [UInt8](repeating: 0x62, count: 60))
        #expect(signer.cachedCount == 4)
        try sign("d8", [UInt8](repeating: 0x62, count: 60))
        #expect(signer.cachedCount == 1, "a fifth answer with 4 entries at most: started over")
    }

    // MARK: The worked example of docs/server.md

    static let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/server.md").standardizedFileURL
    static let exampleX = "iKe_ZxkJKGdvqmyFXgIi996C6vjndXn6vrrahBnzIwY"
    static let exampleY = "06hjoAOnhTiQLxEnZYtzjPlPiH6BR4DcuslEIYt-FXU"
    static let exampleKid = "wgftNDJpydm5N8D3O8oaJYM-LNzCRobFml5DKXMnUSg"
    static let exampleBody = #"{"deckVersion":3,"released":[{"keyB64":"q8P5y3XvYbqM0m0cZk5o3c8Hq2yQ1VQ0u0cVZr2d9xY=","n":0,"nonceB64":"AAECAwQFBgcICQoL"}]}"#
    static let exampleProtected =
        #"{"alg":"ES256","deckVersion":3,"device":"3f6c1a2b9d8e7f60a1b2c3d4e5f60718","exp":1796115600,"iat":1796112000,"kid":"wgftNDJpydm5N8D3O8oaJYM-LNzCRobFml5DKXMnUSg","query":"session=keynote","route":"/api/sync/keys","seq":12,"status":200,"typ":"pulse-answer"}"#
    static let exampleHeader =
        "eyJhbGciOiJFUzI1NiIsImRlY2tWZXJzaW9uIjozLCJkZXZpY2UiOiIzZjZjMWEyYjlkOGU3ZjYwYTFiMmMzZDRlNWY2MDcxOCIsImV4cCI6MTc5NjExNTYwMCwiaWF0IjoxNzk2MTEyMDAwLCJraWQiOiJ3Z2Z0TkRKcHlkbTVOOEQzTzhvYUpZTS1MTnpDUm9iRm1sNURLWE1uVVNnIiwicXVlcnkiOiJzZXNzaW9uPWtleW5vdGUiLCJyb3V0ZSI6Ii9hcGkvc3luYy9rZXlzIiwic2VxIjoxMiwic3RhdHVzIjoyMDAsInR5cCI6InB1bHNlLWFuc3dlciJ9..aRVF5OGhlH9mH28PWDtBj6DG0Tmwxhd_fvyvah_TNFHAOcwfUVEjS2wYEExAyIlbHEl4X-XyFknu_W6697kQdA"

    @Test func theWorkedExampleOfTheDocsVerifies() throws {
        let point = [0x04] + (try #require(Base64URL.decode(Self.exampleX))) + (try #require(Base64URL.decode(Self.exampleY)))
        let publicKey = try P256.PublicKey(x963Representation: point)
        // The same key as the request-signature example's, and its kid is its thumbprint.
        #expect(publicKey == (try P256.PublicKey(derRepresentation: try #require(Data(base64Encoded: DeviceSignatureTests.examplePublicKey)))))
        #expect(publicKey.jwkThumbprint == Self.exampleKid)
        let keys = [AnswerKey(publicKey: publicKey, signsFrom: 0)]
        let body = Array((Self.exampleBody + "\n").utf8)
        let claims = try AnswerSignature.verify(header: Self.exampleHeader, body: body, keys: keys)
        #expect(claims == AnswerClaims(
            route: "/api/sync/keys", query: "session=keynote", device: DeviceSignatureTests.exampleDevice, status: 200, seq: 12, deckVersion: 3,
            iat: 1_796_112_000, exp: 1_796_115_600, kid: Self.exampleKid))
        #expect(Base64URL.decode(Self.exampleHeader.components(separatedBy: "..")[0]) == Array(Self.exampleProtected.utf8))
        var altered = body
        altered[10] ^= 1
        #expect(throws: AnswerSignatureError.badSignature(kid: Self.exampleKid)) { try AnswerSignature.verify(header: Self.exampleHeader, body: altered, keys: keys) }
        // The document shows exactly these values.
        let text = try String(contentsOf: Self.docs, encoding: .utf8)
        for value in ["```\n" + Self.exampleBody + "\n```", "```\n" + Self.exampleProtected + "\n```", "Pulse-Signature: " + Self.exampleHeader,
                      Self.exampleX, Self.exampleY, Self.exampleKid] {
            #expect(text.contains(value), "docs/server.md lacks \(value.prefix(40))…")
        }
    }

    /// docs/server.md's check by hand, run as a reader would: the Python script as the document shows it (whole,
    /// no placeholder to fill in), with `python3` and `cryptography` (Debian's python3-cryptography, installed by
    /// Scripts/bootstrap). It prints the protected header; with one byte of its BODY changed it raises.
    @Test func theDocsPythonCheckRunsAsShown() throws {
        let text = try String(contentsOf: Self.docs, encoding: .utf8)
        let start = try #require(text.range(of: "```\nimport base64\n"), "docs/server.md has no Python check")
        let end = try #require(text.range(of: "\n```", range: start.upperBound..<text.endIndex))
        let script = String(text[text.index(start.lowerBound, offsetBy: 4)..<end.lowerBound])
        func run(_ script: String) throws -> (code: Int32, out: String, err: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", "-c", script]
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            let output = out.fileHandleForReading.readDataToEndOfFile(), errors = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self))
        }
        let good = try run(script)
        #expect(good.code == 0, "\(good.err)")
        #expect(good.out == Self.exampleProtected + "\n")
        let body = "BODY = b'" + Self.exampleBody
        #expect(script.contains(body), "the script's BODY is not the example's")
        let bad = try run(script.replacingOccurrences(of: body, with: body.replacingOccurrences(of: "\"n\":0", with: "\"n\":1")))
        #expect(bad.code != 0 && bad.err.contains("InvalidSignature"), "\(bad.code) \(bad.err)")
    }
}
