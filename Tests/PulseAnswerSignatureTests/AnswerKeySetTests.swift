import PulseAnswerSignature
import PulseCore
import PulseCrypto
import Testing

/// The answer-key set: what encodes parses back, and a key that is not what it claims is refused.
@Suite struct AnswerKeySetTests {
    @Test func roundTrip() throws {
        let first = try P256.PrivateKey(), second = try P256.PrivateKey()
        let keys = [AnswerKey(publicKey: first.publicKey, signsFrom: 100, retiresAt: 9000), AnswerKey(publicKey: second.publicKey, signsFrom: 5000)]
        let encoded = AnswerKeySet.encode(keys)
        #expect(try AnswerKeySet.parse(encoded) == keys)
        let text = String(decoding: encoded, as: UTF8.self)
        #expect(text.hasPrefix("{\"keys\":[{\"alg\":\"ES256\",\"crv\":\"P-256\",\"kid\":\"\(first.publicKey.jwkThumbprint)\""))
        #expect(text.contains("\"use\":\"sig\""))
    }

    @Test func unknownMembersAreIgnored() throws {
        let key = try P256.PrivateKey()
        var jwk = try #require(JSONValue.parse(AnswerKeySet.encode([AnswerKey(publicKey: key.publicKey, signsFrom: 1)]))["keys"]?.arrayValue?.first?.objectValue)
        jwk["x5c"] = ["whatever"]
        let parsed = try AnswerKeySet.parse(JSONValue.object(["keys": [.object(jwk)], "other": true]).canonicalBytes)
        #expect(parsed.map(\.kid) == [key.publicKey.jwkThumbprint])
    }

    @Test func badKeysAreRefused() throws {
        let key = try P256.PrivateKey(), other = try P256.PrivateKey()
        let jwk = try #require(JSONValue.parse(AnswerKeySet.encode([AnswerKey(publicKey: key.publicKey, signsFrom: 1)]))["keys"]?.arrayValue?.first?.objectValue)
        let changes: [(String, JSONValue?)] = [
            ("kid", .string(other.publicKey.jwkThumbprint)), ("kid", nil), ("kty", "RSA"), ("crv", "P-384"), ("alg", "RS256"), ("use", "enc"),
            ("x", .string(Base64URL.encode([UInt8](repeating: 1, count: 32)))), ("y", "AA"), ("x", nil), ("signsFrom", nil), ("signsFrom", "1"),
            ("retiresAt", .double(1.5)),
        ]
        for (name, value) in changes {
            var changed = jwk
            changed[name] = value
            #expect(throws: AnswerSignatureError.self, "\(name)") { try AnswerKeySet.parse(JSONValue.object(["keys": [.object(changed)]]).canonicalBytes) }
        }
        for text in ["", "[]", "{}", "{\"keys\":{}}", "{\"keys\":[1]}", String(repeating: " ", count: 70_000)] {
            #expect(throws: AnswerSignatureError.self, "\(text.prefix(20))") { try AnswerKeySet.parse(Array(text.utf8)) }
        }
    }
}
