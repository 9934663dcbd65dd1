import Foundation
import Testing
@testable import PulseCrypto

/// X25519 against Wycheproof's x25519_test.json (Tests/Fixtures/wycheproof, Apache-2.0).
@Suite struct X25519WycheproofTests {
    private struct File: Decodable {
        let numberOfTests: Int
        let testGroups: [Group]
    }
    private struct Group: Decodable {
        let curve: String
        let tests: [Case]
    }
    private struct Case: Decodable {
        let tcId: Int
        let flags: [String]
        let `public`: String
        let `private`: String
        let shared: String
        let result: String
    }

    private static func load() throws -> File {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/wycheproof/x25519_test.json")
        return try JSONDecoder().decode(File.self, from: Data(contentsOf: url))
    }

    @Test func allVectors() throws {
        let file = try Self.load()
        var checked = 0
        var rejectedZero = 0
        for group in file.testGroups {
            #expect(group.curve == "curve25519")
            for test in group.tests {
                let privateKey = try #require(Hex.decode(test.private))
                let publicKey = try #require(Hex.decode(test.public))
                let expected = try #require(Hex.decode(test.shared))
                checked += 1
                if expected == [UInt8](repeating: 0, count: 32) {
                    // age (and we) must refuse an all-zero shared secret.
                    #expect(test.flags.contains("ZeroSharedSecret"), "tcId \(test.tcId)")
                    #expect(throws: X25519.zeroSharedSecret, "tcId \(test.tcId)") {
                        try X25519.sharedSecret(privateKey: privateKey, publicKey: publicKey)
                    }
                    rejectedZero += 1
                    continue
                }
                // "valid" and "acceptable" (twist points, non-canonical public keys) both compute per RFC 7748.
                #expect(test.result == "valid" || test.result == "acceptable")
                let shared = try X25519.sharedSecret(privateKey: privateKey, publicKey: publicKey)
                #expect(shared.isEqual(to: expected), "tcId \(test.tcId)")
            }
        }
        #expect(checked == file.numberOfTests)
        #expect(rejectedZero > 0)
    }

    @Test func publicKeyFromPrivateMatchesRFC7748() throws {
        // RFC 7748 section 6.1: Alice's and Bob's key pairs and their shared secret.
        let alicePrivate = Hex.decode("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")!
        let alicePublic = Hex.decode("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")!
        let bobPrivate = Hex.decode("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb")!
        let bobPublic = Hex.decode("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")!
        let shared = Hex.decode("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")!
        #expect(try X25519.publicKey(privateKey: alicePrivate) == alicePublic)
        #expect(try X25519.publicKey(privateKey: bobPrivate) == bobPublic)
        #expect(try X25519.sharedSecret(privateKey: alicePrivate, publicKey: bobPublic).isEqual(to: shared))
        #expect(try X25519.sharedSecret(privateKey: bobPrivate, publicKey: alicePublic).isEqual(to: shared))
    }

    @Test func generatedKeysAgree() throws {
        let a = try X25519.generatePrivateKey()
        let b = try X25519.generatePrivateKey()
        #expect(!a.isEqual(to: b))
        #expect("\(a)" == "<secret: 32 bytes>")
        let ab = try X25519.sharedSecret(privateKey: a, publicKey: X25519.publicKey(privateKey: b))
        let ba = try X25519.sharedSecret(privateKey: b, publicKey: X25519.publicKey(privateKey: a))
        #expect(ab.isEqual(to: ba))
        #expect("\(ab)" == "<secret: 32 bytes>")
    }

    @Test func wrongLengthsAreRejected() {
        #expect(throws: CryptoError.badLength(what: "X25519 private key", expected: 32, actual: 31)) {
            try X25519.publicKey(privateKey: [UInt8](repeating: 1, count: 31))
        }
        #expect(throws: CryptoError.badLength(what: "X25519 public key", expected: 32, actual: 33)) {
            try X25519.sharedSecret(privateKey: [UInt8](repeating: 1, count: 32), publicKey: [UInt8](repeating: 9, count: 33))
        }
    }
}
