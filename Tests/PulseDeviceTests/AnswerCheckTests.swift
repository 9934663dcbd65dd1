import Foundation
import PulseAnswerSignature
import PulseCore
import PulseCrypto
import Testing
@testable import PulseDevice

/// Each rule of `AnswerCheck` alone: answers signed here with a test key, checked against a state.
@Suite struct AnswerCheckTests {
    static let device = String(repeating: "a", count: 32)
    static let now = 1_796_280_000
    let key: P256.PrivateKey
    let trusted: [AnswerKey]

    init() throws {
        key = try P256.PrivateKey()
        trusted = [AnswerKey(publicKey: key.publicKey, signsFrom: 0)]
    }

    static func manifestBody(_ version: String) -> [UInt8] {
        JSONValue.object(["packageVersion": .string(version), "slides": []]).canonicalBytes
    }

    /// A session manifest answer for `keynote`, signed with `claims` changed by `change`.
    func manifest(
        version: String = "v7", seq: Int = 7, iat: Int = now, status: Int = 200, body: [UInt8]? = nil, signer: P256.PrivateKey? = nil,
        _ change: (inout AnswerClaims) -> Void = { _ in }
    ) throws -> ReceivedAnswer {
        let bytes = body ?? (status == 304 ? [] : Self.manifestBody(version))
        var claims = AnswerClaims(
            route: "/api/sync/manifest", query: "session=keynote", device: Self.device, status: status, seq: seq, packageVersion: version,
            iat: iat, exp: iat + 3600)
        change(&claims)
        let header = try AnswerSignature.sign(body: bytes, claims: claims, key: signer ?? key)
        return ReceivedAnswer(
            route: "/api/sync/manifest", query: "session=keynote", device: Self.device, status: status, body: bytes, signature: header,
            etag: "\"\(version)\"")
    }

    func keysAnswer(deck: Int, seq: Int, bodyDeck: Int? = nil) throws -> ReceivedAnswer {
        let body = JSONValue.object(["deckVersion": .int(bodyDeck ?? deck), "released": []]).canonicalBytes
        let claims = AnswerClaims(
            route: "/api/sync/keys", query: "session=keynote", device: Self.device, status: 200, seq: seq, deckVersion: deck,
            iat: Self.now, exp: Self.now + 3600)
        return ReceivedAnswer(
            route: "/api/sync/keys", query: "session=keynote", device: Self.device, status: 200, body: body,
            signature: try AnswerSignature.sign(body: body, claims: claims, key: key))
    }

    var signing: AnswerState { AnswerState(signs: true, keySet: try? JSONValue.parse(AnswerKeySet.encode(trusted))) }

    func refusal(_ answer: ReceivedAnswer, _ state: AnswerState, keys: [AnswerKey]? = nil) -> AnswerRefusal? {
        do { _ = try AnswerCheck.check(answer, state: state, keys: keys ?? trusted); return nil } catch { return error }
    }

    @Test func aValidAnswerIsAcceptedAndRecorded() throws {
        let state = try AnswerCheck.check(try manifest(), state: signing, keys: trusted)
        #expect(state.answers["/api/sync/manifest?session=keynote"] == .init(seq: 7, packageVersion: "v7", iat: Self.now))
        #expect(state.verifiedTime == Self.now)
        let again = try AnswerCheck.check(try manifest(status: 304), state: state, keys: trusted)
        #expect(again.answers == state.answers, "a 304 for the accepted version changes nothing")
    }

    @Test func unsignedAnswersPassOnlyWhileTheServerIsNotKnownToSign() throws {
        var unsigned = try manifest()
        unsigned.signature = nil
        #expect(try AnswerCheck.check(unsigned, state: AnswerState(signs: false), keys: []) == AnswerState(signs: false))
        #expect(refusal(unsigned, signing)?.rule == .signature)
    }

    @Test func alteredOrForeignSignaturesAreRefused() throws {
        var altered = try manifest()
        altered.body = Self.manifestBody("v7").map { $0 == UInt8(ascii: "7") ? UInt8(ascii: "8") : $0 }
        #expect(refusal(altered, signing)?.rule == .signature, "a swapped body")
        var flipped = try manifest()
        let header = try #require(flipped.signature)
        flipped.signature = String(header.dropLast()) + (header.hasSuffix("A") ? "B" : "A")
        #expect(refusal(flipped, signing)?.rule == .signature, "an altered signature")
        var garbage = try manifest()
        garbage.signature = "not..a jws"
        #expect(refusal(garbage, signing)?.rule == .signature, "a malformed header")
        let stranger = try manifest(signer: try P256.PrivateKey())
        let refused = try #require(refusal(stranger, signing))
        #expect(refused.rule == .signature && refused.unknownKey != nil, "an unknown key asks for the key set again")
        #expect(refused.description.hasPrefix("refused GET /api/sync/manifest?session=keynote (rule signature): "))
    }

    @Test func anAnswerForAnotherRequestIsRefused() throws {
        let cases: [(String, ReceivedAnswer)] = [
            ("another device", try manifest { $0.device = String(repeating: "b", count: 32) }),
            ("another session", try manifest { $0.query = "session=workshop" }),
            ("another route", try manifest { $0.route = "/api/sync/series/keynote/manifest" }),
            ("another status", try manifest { $0.status = 304 }),
            ("another version than the body", try manifest(body: Self.manifestBody("v6"))),
            ("no version", try manifest { $0.packageVersion = nil }),
        ]
        for (what, answer) in cases {
            #expect(refusal(answer, signing)?.rule == .binding, "\(what)")
        }
        var wrongETag = try manifest(status: 304)
        wrongETag.etag = "\"v6\""
        #expect(refusal(wrongETag, signing)?.rule == .binding, "a 304 signed for another version than its ETag")
        #expect(refusal(try keysAnswer(deck: 3, seq: 7, bodyDeck: 2), signing)?.rule == .binding, "keys signed for another deckVersion")
    }

    /// The replay the issue names: an older answer, validly signed by the trusted key, after a newer one.
    @Test func aReplayedOlderButValidlySignedAnswerIsRefused() throws {
        let old = try manifest(version: "v6", seq: 6, iat: Self.now - 60)
        let accepted = try AnswerCheck.check(try manifest(), state: signing, keys: trusted)
        let refused = try #require(refusal(old, accepted))
        #expect(refused.rule == .rollback)
        #expect(refused.reason == "seq 6 is lower than 7 already accepted")
        #expect(refusal(try manifest(version: "v7b", iat: Self.now - 1), accepted)?.rule == .rollback,
            "the same seq with another packageVersion, signed before the accepted one")
        #expect(refusal(try manifest(version: "v7b", iat: Self.now + 60), accepted) == nil,
            "the same seq with another packageVersion signed later: a resource released by the server's clock")
        let keys = try AnswerCheck.check(try keysAnswer(deck: 3, seq: 7), state: signing, keys: trusted)
        #expect(refusal(try keysAnswer(deck: 2, seq: 8), keys)?.rule == .rollback, "a lower deckVersion under a higher seq")
        #expect(try AnswerCheck.check(try manifest(version: "v8", seq: 8), state: accepted, keys: trusted).answers.count == 1)
    }

    @Test func anAnswerExpiredByTheVerifiedServerTimeIsRefused() throws {
        var state = signing
        state.verified(iat: Self.now + 3601)
        let refused = try #require(refusal(try manifest(), state))
        #expect(refused.rule == .freeze)
        state.verifiedTime = Self.now + 3600
        #expect(refusal(try manifest(), state) == nil, "exp itself is still valid")
        let later = try AnswerCheck.check(try manifest(), state: state, keys: trusted)
        #expect(later.verifiedTime == Self.now + 3600, "an older iat never moves the verified time back")
    }

    // MARK: The key set

    func keySet(_ keys: [AnswerKey], seq: Int, by signer: P256.PrivateKey, iat: Int = now) throws -> (body: [UInt8], header: String) {
        let body = AnswerKeySet.encode(keys)
        let claims = AnswerClaims(route: "/api/sync/answer-keys", query: "", device: "", status: 200, seq: seq, iat: iat, exp: iat + 3600)
        return (body, try AnswerSignature.sign(body: body, claims: claims, key: signer))
    }

    @Test func aKeySetIsTrustedOnFirstUseThenOnlyWhenATrustedKeySignedIt() throws {
        let first = try keySet(trusted, seq: 1, by: key)
        let state = try AnswerCheck.trustKeySet(body: first.body, header: first.header, state: AnswerState())
        let trustedNow = try AnswerCheck.trustedKeys(state)
        #expect(state.signs == true && state.keySetSeq == 1 && trustedNow == trusted)

        let next = try P256.PrivateKey()
        let both = trusted + [AnswerKey(publicKey: next.publicKey, signsFrom: Self.now + 600)]
        let rotated = try AnswerCheck.trustKeySet(body: try keySet(both, seq: 2, by: key).body, header: try keySet(both, seq: 2, by: key).header, state: state)
        let trustedAfter = try AnswerCheck.trustedKeys(rotated)
        #expect(trustedAfter == both, "the old key vouches for the new one")

        let stranger = try P256.PrivateKey()
        let planted = try keySet([AnswerKey(publicKey: stranger.publicKey, signsFrom: 0)], seq: 3, by: stranger)
        #expect(throws: AnswerRefusal.self) { try AnswerCheck.trustKeySet(body: planted.body, header: planted.header, state: rotated) }
        let older = try keySet(trusted, seq: 1, by: key)
        #expect(throws: AnswerRefusal(.rollback, "/api/sync/answer-keys", "key set generation 1 is lower than 2 already trusted")) {
            try AnswerCheck.trustKeySet(body: older.body, header: older.header, state: rotated)
        }
        #expect(throws: AnswerRefusal.self) { try AnswerCheck.trustKeySet(body: first.body, header: nil, state: AnswerState()) }
        let foreign = try keySet(trusted, seq: 1, by: stranger)
        #expect(throws: AnswerRefusal.self, "a first key set signed by a key it does not hold") {
            try AnswerCheck.trustKeySet(body: foreign.body, header: foreign.header, state: AnswerState())
        }
    }

    // MARK: The worked example of docs/server.md, as the device checks it

    static let exampleHeader = "eyJhbGciOiJFUzI1NiIsImRlY2tWZXJzaW9uIjozLCJkZXZpY2UiOiIzZjZjMWEyYjlkOGU3ZjYwYTFiMmMzZDRlNWY2MDcxOCIsImV4cCI6MTc5NjExNTYwMCwiaWF0IjoxNzk2MTEyMDAwLCJraWQiOiJ3Z2Z0TkRKcHlkbTVOOEQzTzhvYUpZTS1MTnpDUm9iRm1sNURLWE1uVVNnIiwicXVlcnkiOiJzZXNzaW9uPWtleW5vdGUiLCJyb3V0ZSI6Ii9hcGkvc3luYy9rZXlzIiwic2VxIjoxMiwic3RhdHVzIjoyMDAsInR5cCI6InB1bHNlLWFuc3dlciJ9..aRVF5OGhlH9mH28PWDtBj6DG0Tmwxhd_fvyvah_TNFHAOcwfUVEjS2wYEExAyIlbHEl4X-XyFknu_W6697kQdA"
    static let exampleBody = Array(#"{"deckVersion":3,"released":[{"keyB64":"q8P5y3XvYbqM0m0cZk5o3c8Hq2yQ1VQ0u0cVZr2d9xY=","n":0,"nonceB64":"AAECAwQFBgcICQoL"}]}"#.utf8) + [0x0a]

    /// docs/device.md, "Worked example": the keys answer of docs/server.md is accepted by a device that
    /// trusts the example key, and refused by each rule once one thing about the device's state differs.
    @Test func theWorkedExampleIsAcceptedThenRefusedRuleByRule() throws {
        let x = try #require(Base64URL.decode("iKe_ZxkJKGdvqmyFXgIi996C6vjndXn6vrrahBnzIwY"))
        let y = try #require(Base64URL.decode("06hjoAOnhTiQLxEnZYtzjPlPiH6BR4DcuslEIYt-FXU"))
        let key = AnswerKey(publicKey: try P256.PublicKey(x963Representation: [0x04] + x + y), signsFrom: 0)
        #expect(key.kid == "wgftNDJpydm5N8D3O8oaJYM-LNzCRobFml5DKXMnUSg")
        let answer = ReceivedAnswer(
            route: "/api/sync/keys", query: "session=keynote", device: "3f6c1a2b9d8e7f60a1b2c3d4e5f60718", status: 200, body: Self.exampleBody,
            signature: Self.exampleHeader)
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/server.md").standardizedFileURL
        let text = try String(contentsOf: docs, encoding: .utf8)
        #expect(text.contains("Pulse-Signature: " + Self.exampleHeader), "docs/server.md shows another header than this test checks")
        let state = AnswerState(signs: true, keySet: try JSONValue.parse(AnswerKeySet.encode([key])))
        let claims = try AnswerSignature.verify(header: Self.exampleHeader, body: Self.exampleBody, keys: [key])
        let accepted = try AnswerCheck.check(answer, state: state, keys: [key])
        let recorded = try #require(accepted.answers["/api/sync/keys?session=keynote"])
        #expect(recorded == .init(seq: 12, deckVersion: 3, iat: 1_796_112_000))
        #expect(accepted.verifiedTime == 1_796_112_000)
        let laterSeq = claims.seq + 1
        var later = state
        later.answers["/api/sync/keys?session=keynote"] = .init(seq: laterSeq, deckVersion: 3)
        #expect(refusal(answer, later, keys: [key])?.rule == .rollback)
        let frozenAt = claims.exp + 1
        var frozen = state
        frozen.verified(iat: frozenAt)
        #expect(refusal(answer, frozen, keys: [key])?.rule == .freeze)
        var other = answer
        other.device = "3f6c1a2b9d8e7f60a1b2c3d4e5f60719"
        #expect(refusal(other, state, keys: [key])?.rule == .binding)
        // docs/device.md tells this example with these very values.
        let deviceDocs = try String(contentsOf: docs.deletingLastPathComponent().appendingPathComponent("device.md"), encoding: .utf8)
        let from = try #require(deviceDocs.range(of: "**Worked example.**"), "docs/device.md has no worked example")
        let to = try #require(deviceDocs.range(of: "**What the app team implements**", range: from.upperBound..<deviceDocs.endIndex))
        let told = deviceDocs[from.upperBound..<to.lowerBound].split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let values = [
            "device `\(claims.device)`", "`GET \(claims.route)?\(claims.query)`", "seq \(claims.seq)", "deckVersion \(claims.deckVersion ?? -1)",
            "iat \(claims.iat)", "exp \(claims.exp)",
            "`{\"seq\": \(recorded.seq), \"deckVersion\": \(recorded.deckVersion ?? -1), \"iat\": \(recorded.iat ?? -1)}`",
            "verified time \(accepted.verifiedTime)", "`rollback` by a device that has accepted seq \(laterSeq)",
            "`freeze` by one that has verified server time \(frozenAt)", "`binding` by device `…\(other.device.suffix(4))`",
        ]
        for value in values { #expect(told.contains(value), "docs/device.md's worked example does not say \(value)") }
        var changed = answer
        changed.body[changed.body.count - 3] = UInt8(ascii: "M")
        #expect(refusal(changed, state, keys: [key])?.rule == .signature)
        #expect(refusal(answer, state, keys: [])?.unknownKey == key.kid)
    }
}
