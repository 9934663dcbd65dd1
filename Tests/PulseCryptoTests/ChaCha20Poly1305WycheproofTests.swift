import Foundation
import Testing
@testable import PulseCrypto

/// ChaCha20-Poly1305 against Wycheproof's chacha20_poly1305_test.json (Tests/Fixtures/wycheproof, Apache-2.0).
@Suite struct ChaCha20Poly1305WycheproofTests {
    private struct File: Decodable {
        let numberOfTests: Int
        let testGroups: [Group]
    }
    private struct Group: Decodable {
        let ivSize: Int
        let keySize: Int
        let tagSize: Int
        let tests: [Case]
    }
    private struct Case: Decodable {
        let tcId: Int
        let key, iv, aad, msg, ct, tag: String
        let result: String
        let flags: [String]
    }

    private static func load() throws -> File {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/wycheproof/chacha20_poly1305_test.json")
        return try JSONDecoder().decode(File.self, from: Data(contentsOf: url))
    }

    @Test func allVectors() throws {
        let file = try Self.load()
        var checked = 0
        var valid = 0
        var invalid = 0
        for group in file.testGroups {
            #expect(group.tagSize == 128 && group.keySize == 256)
            for test in group.tests {
                checked += 1
                let key = try #require(Hex.decode(test.key))
                let nonce = try #require(Hex.decode(test.iv))
                let aad = try #require(Hex.decode(test.aad))
                let message = try #require(Hex.decode(test.msg))
                let sealed = try #require(Hex.decode(test.ct + test.tag))
                if group.ivSize != 96 {
                    #expect(test.result == "invalid", "tcId \(test.tcId)")
                    #expect(throws: CryptoError.self, "tcId \(test.tcId)") {
                        try ChaCha20Poly1305.open(sealed, key: key, nonce: nonce, authenticating: aad)
                    }
                    #expect(throws: CryptoError.self, "tcId \(test.tcId)") {
                        try ChaCha20Poly1305.seal(message, key: key, nonce: nonce, authenticating: aad)
                    }
                    invalid += 1
                    continue
                }
                switch test.result {
                case "valid":
                    #expect(try ChaCha20Poly1305.seal(message, key: key, nonce: nonce, authenticating: aad) == sealed,
                            "tcId \(test.tcId)")
                    #expect(try ChaCha20Poly1305.open(sealed, key: key, nonce: nonce, authenticating: aad) == message,
                            "tcId \(test.tcId)")
                    valid += 1
                case "invalid":
                    #expect(throws: CryptoError.authenticationFailure, "tcId \(test.tcId)") {
                        try ChaCha20Poly1305.open(sealed, key: key, nonce: nonce, authenticating: aad)
                    }
                    invalid += 1
                default:
                    Issue.record("tcId \(test.tcId): unexpected result \(test.result)")
                }
            }
        }
        #expect(checked == file.numberOfTests)
        #expect(valid > 200 && invalid > 50)
    }

    @Test func flippedBitsFailAuthentication() throws {
        let key = try SecureRandom.bytes(32)
        let nonce = [UInt8](repeating: 0, count: 12)
        let sealed = try ChaCha20Poly1305.seal(Array("key table".utf8), key: key, nonce: nonce, authenticating: [1, 2])
        #expect(try ChaCha20Poly1305.open(sealed, key: key, nonce: nonce, authenticating: [1, 2]) == Array("key table".utf8))
        for index in sealed.indices {
            var damaged = sealed
            damaged[index] ^= 0x01
            #expect(throws: CryptoError.authenticationFailure) {
                try ChaCha20Poly1305.open(damaged, key: key, nonce: nonce, authenticating: [1, 2])
            }
        }
        #expect(throws: CryptoError.authenticationFailure) {
            try ChaCha20Poly1305.open(sealed, key: key, nonce: nonce, authenticating: [1, 3])
        }
        #expect(throws: CryptoError.authenticationFailure) {
            try ChaCha20Poly1305.open(Array(sealed.prefix(15)), key: key, nonce: nonce)
        }
    }

    @Test func emptyPlaintextRoundTrips() throws {
        let key = try SecureRandom.bytes(32)
        let nonce = try SecureRandom.bytes(12)
        let sealed = try ChaCha20Poly1305.seal([UInt8](), key: key, nonce: nonce)
        #expect(sealed.count == 16)
        #expect(try ChaCha20Poly1305.open(sealed, key: key, nonce: nonce) == [])
    }
}
