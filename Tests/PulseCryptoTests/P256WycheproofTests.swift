import Foundation
import PulseCore
import Testing
@testable import PulseCrypto

/// ES256 and P-256 public keys against Wycheproof (Tests/Fixtures/wycheproof, Apache-2.0):
/// every case of the P1363 and DER ECDSA files, and every public key of the ECDH file through import.
@Suite struct P256WycheproofTests {
    /// Every case of ecdsa_secp256r1_sha256_p1363_test.json through `isValidSignature`, the exact path
    /// the server uses for `X-Pulse-Device` signatures: valid → true, invalid → false.
    @Test func ecdsaP1363EveryCase() throws {
        let file = try WycheproofFile.load("ecdsa_secp256r1_sha256_p1363_test.json")
        var valid = 0, invalid = 0
        var keys: [Int: P256.PublicKey] = [:]
        for (group, test) in file.cases {
            #expect(try group.string("sha") == "SHA-256" && group.string("type") == "EcdsaP1363Verify")
            let key = try keys[group.index] ?? Self.importGroupKey(group)
            keys[group.index] = key
            let verdict = key.isValidSignature(try test.hex("sig"), for: try test.hex("msg"))
            switch test.result {
            case .valid:
                #expect(verdict, "tcId \(test.id) (\(test.comment)) must verify")
                valid += 1
            case .invalid:
                #expect(!verdict, "tcId \(test.id) (\(test.comment)) must not verify")
                invalid += 1
            case .acceptable:
                Issue.record("tcId \(test.id): the file has no 'acceptable' case; decide and document one before accepting it")
            }
        }
        #expect(valid + invalid == file.numberOfTests)
        #expect(valid == 173 && invalid == 89)
    }

    /// Every case of ecdsa_secp256r1_sha256_test.json (DER signatures, including BER, trailing bytes
    /// and wrong types) through `isValidDERSignature`.
    @Test func ecdsaDEREveryCase() throws {
        let file = try WycheproofFile.load("ecdsa_secp256r1_sha256_test.json")
        var checked = 0
        var keys: [Int: P256.PublicKey] = [:]
        for (group, test) in file.cases {
            #expect(try group.string("sha") == "SHA-256" && group.string("type") == "EcdsaVerify")
            let key = try keys[group.index] ?? Self.importGroupKey(group)
            keys[group.index] = key
            let verdict = key.isValidDERSignature(try test.hex("sig"), for: try test.hex("msg"))
            #expect(test.result != .acceptable, "tcId \(test.id)")
            #expect(verdict == (test.result == .valid), "tcId \(test.id) (\(test.comment), \(test.flags)): \(verdict)")
            checked += 1
        }
        #expect(checked == file.numberOfTests)
    }

    /// A group's key through DER import; it must equal the group's uncompressed point, and our JWK
    /// coordinates must equal Wycheproof's where it gives a JWK.
    private static func importGroupKey(_ group: WycheproofFile.Group) throws -> P256.PublicKey {
        let der = try group.hex("publicKeyDer")
        let key = try P256.PublicKey(derRepresentation: der)
        let point = try #require(group.fields["publicKey"]?["uncompressed"]?.stringValue.flatMap { Hex.decode($0) })
        #expect(key.x963Representation == point, "group \(group.index)")
        #expect(key.derRepresentation == der, "group \(group.index)")
        if let jwk = group.fields["publicKeyJwk"] {
            let ours = try JSONValue.parse(Data(key.jwk(kid: "none").utf8))
            for member in ["kty", "crv", "x", "y", "kid"] {
                #expect(ours[member] == jwk[member], "group \(group.index): JWK \(member)")
            }
        }
        return key
    }

    /// Every public key of ecdh_secp256r1_test.json through `PublicKey(derRepresentation:)`: valid
    /// keys are accepted and re-export byte for byte; invalid ones (off-curve, wrong curve, bad
    /// encodings, weak or modified groups) are refused. Of the "acceptable" ones we accept the
    /// compressed point and refuse the rest (BER and odd ASN.1, explicit curve parameters): see
    /// docs/es256.md.
    @Test func ecdhPublicKeysThroughImport() throws {
        let file = try WycheproofFile.load("ecdh_secp256r1_test.json")
        var accepted = 0, refused = 0, acceptedCompressed = 0, refusedAcceptable = 0
        for (group, test) in file.cases {
            #expect(try group.string("curve") == "secp256r1" && group.string("encoding") == "asn")
            let der = try test.hex("public")
            let imported = Result { try P256.PublicKey(derRepresentation: der) }
            switch (test.result, imported) {
            case let (.valid, .success(key)):
                #expect(key.derRepresentation == der, "tcId \(test.id): re-export")
                accepted += 1
            case let (.valid, .failure(error)):
                Issue.record("tcId \(test.id) (\(test.comment)) is valid but was refused: \(error)")
            case (.invalid, .success):
                Issue.record("tcId \(test.id) (\(test.comment), \(test.flags)) is invalid but was accepted")
            case let (.invalid, .failure(error)):
                #expect(error is CryptoError, "tcId \(test.id)")
                refused += 1
            case let (.acceptable, .success(key)):
                #expect(test.flags.contains("CompressedPublic"), "tcId \(test.id) (\(test.comment), \(test.flags)) accepted")
                // The compressed point's x is the key's x.
                #expect(Array(der.suffix(32)) == key.x, "tcId \(test.id)")
                acceptedCompressed += 1
            case (.acceptable, .failure):
                #expect(!test.flags.contains("CompressedPublic"), "tcId \(test.id): a valid compressed point was refused")
                refusedAcceptable += 1
            }
        }
        #expect(accepted + refused + acceptedCompressed + refusedAcceptable == file.numberOfTests)
        #expect(accepted == 330 && refused == 52 && acceptedCompressed == 1 && refusedAcceptable == 229)
    }
}
