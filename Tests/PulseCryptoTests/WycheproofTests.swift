import Foundation
import PulseCore
import Testing

@testable import PulseCrypto

/// Project Wycheproof vectors (Tests/Fixtures/wycheproof, Apache-2.0, see its LICENSE).
struct WycheproofTests {
    struct Vector {
        let id: Int
        let fields: [String: JSONValue]
        func hex(_ key: String) -> [UInt8] { Hex.decode(fields[key]?.stringValue ?? "") ?? [] }
        var valid: Bool { fields["result"]?.stringValue != "invalid" }
    }

    /// The tests of the groups that match `groupFilter`.
    static func vectors(_ file: String, groupFilter: ([String: JSONValue]) -> Bool) throws -> [Vector] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Fixtures/wycheproof/\(file)").standardizedFileURL
        let root = try JSONValue.parse(Data(contentsOf: url))
        return (root["testGroups"]?.arrayValue ?? []).compactMap(\.objectValue).filter(groupFilter).flatMap { group in
            (group["tests"]?.arrayValue ?? []).compactMap { test in
                test.objectValue.map { Vector(id: $0["tcId"]?.intValue ?? -1, fields: $0) }
            }
        }
    }

    @Test func aes256GCMWith96BitNonceAnd128BitTag() throws {
        let vectors = try Self.vectors("aes_gcm_test.json") {
            $0["keySize"]?.intValue == 256 && $0["ivSize"]?.intValue == 96 && $0["tagSize"]?.intValue == 128
        }
        #expect(vectors.count >= 60, "the fixture must hold the AES-256-GCM vectors")
        for vector in vectors {
            let key = vector.hex("key"), nonce = vector.hex("iv"), aad = vector.hex("aad")
            let expected = vector.hex("ct") + vector.hex("tag")
            if vector.valid {
                let sealed = try AES256GCM.seal(vector.hex("msg"), key: key, nonce: nonce, authenticating: aad)
                #expect(sealed == expected, "tcId \(vector.id): seal")
                let opened = try AES256GCM.open(expected, key: key, nonce: nonce, authenticating: aad)
                #expect(opened == vector.hex("msg"), "tcId \(vector.id): open")
            } else {
                #expect(throws: CryptoError.authenticationFailure, "tcId \(vector.id) must be rejected") {
                    try AES256GCM.open(expected, key: key, nonce: nonce, authenticating: aad)
                }
            }
        }
    }

    @Test func aesGCMRejectsOtherNonceAndKeySizes() {
        #expect(throws: CryptoError.self) { try AES256GCM.seal([1], key: [UInt8](repeating: 0, count: 32), nonce: [0, 0, 0, 0, 0, 0, 0, 0]) }
        #expect(throws: CryptoError.self) { try AES256GCM.seal([1], key: [UInt8](repeating: 0, count: 16), nonce: [UInt8](repeating: 0, count: 12)) }
    }

    @Test func hkdfSHA256() throws {
        let vectors = try Self.vectors("hkdf_sha256_test.json") { _ in true }
        #expect(vectors.count >= 80)
        for vector in vectors {
            let size = vector.fields["size"]?.intValue ?? 0
            if vector.valid {
                let okm = try HKDF.sha256(inputKeyMaterial: vector.hex("ikm"), salt: vector.hex("salt"), info: vector.hex("info"), count: size)
                #expect(okm == vector.hex("okm"), "tcId \(vector.id)")
            } else {
                #expect(throws: CryptoError.self, "tcId \(vector.id) must be rejected") {
                    try HKDF.sha256(inputKeyMaterial: vector.hex("ikm"), salt: vector.hex("salt"), info: vector.hex("info"), count: size)
                }
            }
        }
    }

    @Test func hmacSHA256() throws {
        let vectors = try Self.vectors("hmac_sha256_test.json") { _ in true }
        #expect(vectors.count >= 150)
        for vector in vectors {
            let tag = vector.hex("tag")
            let code = HMACSHA256.authenticationCode(for: vector.hex("msg"), key: vector.hex("key"))
            #expect((Array(code.prefix(tag.count)) == tag) == vector.valid, "tcId \(vector.id)")
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
