import Foundation
import Testing

@testable import PulseCrypto

/// Project Wycheproof vectors (Tests/Fixtures/wycheproof, Apache-2.0, see its LICENSE): AES-GCM,
/// HKDF-SHA256, HMAC-SHA256. Every case of every file runs; see `WycheproofFile` for the strictness.
@Suite struct WycheproofTests {
    /// Every group of aes_gcm_test.json: 256-bit key, 96-bit IV and 128-bit tag are ours and must
    /// compute exactly; every other key or IV size must be refused with a typed error, never trap.
    @Test func aesGCMEveryGroup() throws {
        let file = try WycheproofFile.load("aes_gcm_test.json")
        var computed = 0, refused = 0
        for (group, test) in file.cases {
            let keySize = try group.int("keySize"), ivSize = try group.int("ivSize"), tagSize = try group.int("tagSize")
            let key = try test.hex("key"), nonce = try test.hex("iv"), aad = try test.hex("aad")
            let message = try test.hex("msg"), sealed = try test.hex("ct") + test.hex("tag")
            // The case must be what its group says, or the refusal below would test the wrong thing.
            #expect(key.count * 8 == keySize && nonce.count * 8 == ivSize, "tcId \(test.id)")
            #expect(try test.hex("tag").count * 8 == tagSize && tagSize == 128, "tcId \(test.id)")
            guard keySize == 256, ivSize == 96 else {
                let expected: CryptoError = keySize != 256
                    ? .badLength(what: "AES-256-GCM key", expected: 32, actual: key.count)
                    : .badLength(what: "AES-256-GCM nonce", expected: 12, actual: nonce.count)
                #expect(throws: expected, "tcId \(test.id): seal") {
                    try AES256GCM.seal(message, key: key, nonce: nonce, authenticating: aad)
                }
                #expect(throws: expected, "tcId \(test.id): open") {
                    try AES256GCM.open(sealed, key: key, nonce: nonce, authenticating: aad)
                }
                refused += 1
                continue
            }
            switch test.result {
            case .valid:
                #expect(try AES256GCM.seal(message, key: key, nonce: nonce, authenticating: aad) == sealed, "tcId \(test.id): seal")
                #expect(try AES256GCM.open(sealed, key: key, nonce: nonce, authenticating: aad) == message, "tcId \(test.id): open")
            case .invalid:
                #expect(throws: CryptoError.authenticationFailure, "tcId \(test.id) must be rejected") {
                    try AES256GCM.open(sealed, key: key, nonce: nonce, authenticating: aad)
                }
            case .acceptable:
                Issue.record("tcId \(test.id): no AES-GCM case is 'acceptable'; decide what it means before accepting it")
            }
            computed += 1
        }
        #expect(computed == 66, "the 256-bit key / 96-bit IV group")
        #expect(computed + refused == file.numberOfTests)
    }

    @Test func aesGCMRejectsOtherNonceAndKeySizes() {
        let key = [UInt8](repeating: 0, count: 32), nonce = [UInt8](repeating: 0, count: 12)
        for count in [0, 8, 11, 13, 16] {
            let bad = [UInt8](repeating: 0, count: count)
            #expect(throws: CryptoError.badLength(what: "AES-256-GCM nonce", expected: 12, actual: count)) {
                try AES256GCM.seal([1], key: key, nonce: bad)
            }
            #expect(throws: CryptoError.badLength(what: "AES-256-GCM nonce", expected: 12, actual: count)) {
                try AES256GCM.open([UInt8](repeating: 0, count: 17), key: key, nonce: bad)
            }
        }
        for count in [0, 16, 24, 31, 33] {
            let bad = [UInt8](repeating: 0, count: count)
            #expect(throws: CryptoError.badLength(what: "AES-256-GCM key", expected: 32, actual: count)) {
                try AES256GCM.seal([1], key: bad, nonce: nonce)
            }
        }
    }

    @Test func hkdfSHA256() throws {
        let file = try WycheproofFile.load("hkdf_sha256_test.json")
        for (_, test) in file.cases {
            let ikm = try test.hex("ikm"), salt = try test.hex("salt"), info = try test.hex("info")
            let size = try test.int("size")
            switch test.result {
            case .valid:
                #expect(try HKDF.sha256(inputKeyMaterial: ikm, salt: salt, info: info, count: size) == test.hex("okm"), "tcId \(test.id)")
            case .invalid:
                #expect(throws: CryptoError.self, "tcId \(test.id) must be rejected") {
                    try HKDF.sha256(inputKeyMaterial: ikm, salt: salt, info: info, count: size)
                }
            case .acceptable:
                Issue.record("tcId \(test.id): unexpected 'acceptable'")
            }
        }
    }

    @Test func hmacSHA256() throws {
        let file = try WycheproofFile.load("hmac_sha256_test.json")
        for (group, test) in file.cases {
            let tag = try test.hex("tag")
            #expect(tag.count * 8 == (try group.int("tagSize")), "tcId \(test.id)")
            let code = try HMACSHA256.authenticationCode(for: try test.hex("msg"), key: try test.hex("key"))
            // Truncated tags (tagSize < 256) compare against the code's prefix.
            #expect((Array(code.prefix(tag.count)) == tag) == (test.result == .valid), "tcId \(test.id)")
            #expect(test.result != .acceptable, "tcId \(test.id)")
        }
    }

    @Test func sha256KnownAnswers() {
        #expect(SHA256.hex([UInt8]()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let hasher = SHA256Hasher()
        hasher.update(Array("a".utf8))
        hasher.update(Array("bc".utf8))
        #expect(Hex.encode(hasher.finalize()) == SHA256.hex(Array("abc".utf8)))
    }

    @Test func hexNames() {
        #expect(Hex.isDigestName(String(repeating: "a", count: 64)))
        #expect(!Hex.isDigestName(String(repeating: "A", count: 64)))
        #expect(!Hex.isDigestName(String(repeating: "a", count: 63)))
        #expect(!Hex.isDigestName(String(repeating: "a", count: 65)))
        #expect(Hex.decode("00ff10") == [0, 255, 16])
        #expect(Hex.decode("0g") == nil)
    }
}

/// The vector reader itself: a damaged file must fail, not shrink into a weaker test.
@Suite struct WycheproofReaderTests {
    private func parse(_ json: String) throws -> WycheproofFile {
        try WycheproofFile.parse(Data(json.utf8), name: "inline.json")
    }

    private let good = """
        {"numberOfTests": 2, "testGroups": [{"keySize": 256, "tests": [
          {"tcId": 1, "comment": "", "flags": [], "key": "00ff", "result": "valid"},
          {"tcId": 2, "comment": "", "flags": ["X"], "key": "", "result": "invalid"}]}]}
        """

    @Test func aWellFormedFileReads() throws {
        let file = try parse(good)
        #expect(file.cases.map(\.test.id) == [1, 2])
        #expect(try file.cases[0].test.hex("key") == [0, 255])
        #expect(try file.cases[1].test.hex("key") == [])
        #expect(try file.groups[0].int("keySize") == 256)
    }

    @Test func aMissingOrMalformedHexFieldThrows() throws {
        let file = try parse(good)
        #expect(throws: WycheproofError.self) { try file.cases[0].test.hex("iv") }
        let odd = try parse(good.replacingOccurrences(of: "\"00ff\"", with: "\"0ff\""))
        #expect(throws: WycheproofError.self) { try odd.cases[0].test.hex("key") }
        let notHex = try parse(good.replacingOccurrences(of: "\"00ff\"", with: "\"00fg\""))
        #expect(throws: WycheproofError.self) { try notHex.cases[0].test.hex("key") }
        let number = try parse(good.replacingOccurrences(of: "\"00ff\"", with: "255"))
        #expect(throws: WycheproofError.self) { try number.cases[0].test.hex("key") }
    }

    @Test func theCaseCountMustMatchNumberOfTests() {
        #expect(throws: WycheproofError.self) { try parse(good.replacingOccurrences(of: "\"numberOfTests\": 2", with: "\"numberOfTests\": 3")) }
        #expect(throws: WycheproofError.self) { try parse(good.replacingOccurrences(of: "\"numberOfTests\": 2,", with: "")) }
        #expect(throws: WycheproofError.self) { try parse(good.replacingOccurrences(of: "\"tcId\": 2", with: "\"tcId\": 1")) }
        #expect(throws: WycheproofError.self) { try parse(good.replacingOccurrences(of: "\"result\": \"invalid\"", with: "\"result\": \"maybe\"")) }
    }
}
