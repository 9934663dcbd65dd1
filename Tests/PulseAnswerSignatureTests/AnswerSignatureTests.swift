import PulseAnswerSignature
import PulseCore
import PulseCrypto
import Testing

/// `Pulse-Signature`: what signs verifies, and anything else (a flipped byte anywhere, another key, a
/// missing member, a non-canonical or oversized header) is refused with the right error, never a trap.
@Suite struct AnswerSignatureTests {
    let key: P256.PrivateKey
    let trusted: [AnswerKey]
    let body = Array("{\"packageVersion\":\"sha256:abc\",\"slides\":[]}\n".utf8)
    let claims = AnswerClaims(
        route: "/api/sync/manifest", query: "session=keynote", device: "dev_1", status: 200, seq: 7, packageVersion: "sha256:abc",
        iat: 1_780_000_000, exp: 1_780_003_600)

    init() throws {
        key = try P256.PrivateKey()
        trusted = [AnswerKey(publicKey: key.publicKey, signsFrom: 0)]
    }

    @Test func roundTrip() throws {
        let header = try AnswerSignature.sign(body: body, claims: claims, key: key)
        let verified = try AnswerSignature.verify(header: header, body: body, keys: trusted)
        var expected = claims
        expected.kid = key.publicKey.jwkThumbprint
        #expect(verified == expected)
        let parts = header.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3 && parts[1].isEmpty)
    }

    @Test func keysRoundTripOptionalMembers() throws {
        let keysClaims = AnswerClaims(route: "/api/sync/keys", query: "session=a", device: "d", status: 304, seq: 0, deckVersion: 3, iat: 5, exp: 65)
        let verified = try AnswerSignature.verify(header: try AnswerSignature.sign(body: [], claims: keysClaims, key: key), body: [], keys: trusted)
        #expect(verified.deckVersion == 3 && verified.packageVersion == nil && verified.status == 304)
    }

    @Test func everyFlippedByteOfTheHeaderFails() throws {
        let header = Array(try AnswerSignature.sign(body: body, claims: claims, key: key).utf8)
        for index in header.indices {
            for flip: UInt8 in [0x01, 0x20] {
                var altered = header
                altered[index] ^= flip
                let text = String(decoding: altered, as: UTF8.self)
                #expect(throws: AnswerSignatureError.self, "byte \(index)") {
                    try AnswerSignature.verify(header: text, body: body, keys: trusted)
                }
            }
        }
    }

    @Test func everyFlippedBodyByteFails() throws {
        let header = try AnswerSignature.sign(body: body, claims: claims, key: key)
        for index in body.indices {
            var altered = body
            altered[index] ^= 0x01
            #expect(throws: AnswerSignatureError.badSignature(kid: key.publicKey.jwkThumbprint), "byte \(index)") {
                try AnswerSignature.verify(header: header, body: altered, keys: trusted)
            }
        }
        #expect(throws: AnswerSignatureError.self) { try AnswerSignature.verify(header: header, body: body + [0x0a], keys: trusted) }
        #expect(throws: AnswerSignatureError.self) { try AnswerSignature.verify(header: header, body: [], keys: trusted) }
    }

    @Test func everyFlippedSignatureByteFails() throws {
        let header = try AnswerSignature.sign(body: body, claims: claims, key: key)
        let parts = header.components(separatedBy: "..")
        let signature = try #require(Base64URL.decode(parts[1]))
        for index in signature.indices {
            var altered = signature
            altered[index] ^= 0x80
            let text = parts[0] + ".." + Base64URL.encode(altered)
            #expect(throws: AnswerSignatureError.self, "byte \(index)") { try AnswerSignature.verify(header: text, body: body, keys: trusted) }
        }
    }

    @Test func anotherKeyIsUnknownOrBad() throws {
        let other = try P256.PrivateKey()
        let header = try AnswerSignature.sign(body: body, claims: claims, key: other)
        #expect(throws: AnswerSignatureError.unknownKey(kid: other.publicKey.jwkThumbprint)) {
            try AnswerSignature.verify(header: header, body: body, keys: trusted)
        }
        // A header naming a trusted kid but signed by another key: the signature is bad.
        let forged = try forge(claims: claims, kid: key.publicKey.jwkThumbprint, signer: other)
        #expect(throws: AnswerSignatureError.badSignature(kid: key.publicKey.jwkThumbprint)) {
            try AnswerSignature.verify(header: forged, body: body, keys: trusted)
        }
        // Either key verifies once both are trusted (rotation).
        _ = try AnswerSignature.verify(header: header, body: body, keys: trusted + [AnswerKey(publicKey: other.publicKey, signsFrom: 0)])
    }

    @Test func everyRequiredMemberIsRequired() throws {
        let full = fields(kid: key.publicKey.jwkThumbprint)
        for name in ["alg", "typ", "kid", "route", "query", "device", "status", "seq", "iat", "exp"] {
            var fields = full
            fields[name] = nil
            let header = try signRaw(.object(fields), signer: key)
            #expect(throws: AnswerSignatureError.malformed("the protected header has no \"\(name)\""), "\(name)") {
                try AnswerSignature.verify(header: header, body: body, keys: trusted)
            }
        }
        for (name, value) in [("status", JSONValue.string("200")), ("seq", .double(1.5)), ("route", .int(1)), ("alg", "none"), ("typ", "JWT"),
                              ("deckVersion", "3"), ("packageVersion", .int(1)), ("exp", .int(1))] {
            var fields = full
            fields[name] = value
            let header = try signRaw(.object(fields), signer: key)
            #expect(throws: AnswerSignatureError.self, "\(name)") { try AnswerSignature.verify(header: header, body: body, keys: trusted) }
        }
    }

    @Test func unknownMembersAreIgnored() throws {
        var fields = fields(kid: key.publicKey.jwkThumbprint)
        fields["zzz"] = ["nested": [1, 2]]
        fields["cty"] = "future"
        let verified = try AnswerSignature.verify(header: try signRaw(.object(fields), signer: key), body: body, keys: trusted)
        #expect(verified.route == claims.route && verified.seq == claims.seq)
    }

    @Test func nonCanonicalHeaderIsRefused() throws {
        let canonical = String(decoding: JSONValue.object(fields(kid: key.publicKey.jwkThumbprint)).canonicalBytes, as: UTF8.self)
        for variant in [canonical.replacingOccurrences(of: ",", with: ", "), " " + canonical, canonical + "\n",
                        "{\"route\":\"/x\"," + canonical.dropFirst()] {
            let header = try signRaw(bytes: Array(variant.utf8), signer: key)
            #expect(throws: AnswerSignatureError.self, "\(variant)") { try AnswerSignature.verify(header: header, body: body, keys: trusted) }
        }
    }

    @Test func malformedShapesAreRefusedWithoutATrap() throws {
        let good = try AnswerSignature.sign(body: body, claims: claims, key: key)
        let parts = good.components(separatedBy: "..")
        let oversized = Base64URL.encode([UInt8](repeating: 0x20, count: 3100)) + ".." + parts[1]
        let cases = ["", ".", "..", "...", parts[0], parts[0] + "." + parts[1], parts[0] + ".eA." + parts[1], parts[0] + "..." + parts[1],
                     parts[0] + "==.." + parts[1], parts[0] + ".." + parts[1] + "AA", parts[0] + "..", ".." + parts[1],
                     Base64URL.encode(Array("[1]".utf8)) + ".." + parts[1], Base64URL.encode(Array("{\"a\":".utf8)) + ".." + parts[1],
                     oversized, String(repeating: "A", count: 100_000)]
        for text in cases {
            #expect(throws: AnswerSignatureError.self, "\(text.prefix(80))") { try AnswerSignature.verify(header: text, body: body, keys: trusted) }
        }
        #expect(throws: AnswerSignatureError.malformed("longer than 4096 bytes")) { try AnswerSignature.verify(header: oversized, body: body, keys: trusted) }
    }

    @Test func descriptionsNameTheRule() {
        #expect(AnswerSignatureError.malformed("x").description.contains("malformed"))
        #expect(AnswerSignatureError.unknownKey(kid: "k").description.contains("unknown key k"))
        #expect(AnswerSignatureError.badSignature(kid: "k").description.contains("does not verify"))
    }

    // MARK: helpers

    private func fields(kid: String) -> [String: JSONValue] {
        [
            "alg": "ES256", "typ": "pulse-answer", "kid": .string(kid), "route": .string(claims.route), "query": .string(claims.query),
            "device": .string(claims.device), "status": .int(claims.status), "seq": .int(claims.seq), "packageVersion": "sha256:abc",
            "iat": .int(claims.iat), "exp": .int(claims.exp),
        ]
    }

    private func forge(claims: AnswerClaims, kid: String, signer: P256.PrivateKey) throws -> String {
        try signRaw(.object(fields(kid: kid)), signer: signer)
    }

    private func signRaw(_ header: JSONValue, signer: P256.PrivateKey) throws -> String {
        try signRaw(bytes: header.canonicalBytes, signer: signer)
    }

    /// A detached JWS over `body` with exactly `bytes` as its protected header.
    private func signRaw(bytes: [UInt8], signer: P256.PrivateKey) throws -> String {
        let protected = Base64URL.encode(bytes)
        let signature = try signer.signature(for: Array((protected + "." + Base64URL.encode(body)).utf8))
        return protected + ".." + Base64URL.encode(signature)
    }
}
