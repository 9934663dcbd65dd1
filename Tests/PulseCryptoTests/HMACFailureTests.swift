import Testing
@testable import PulseCrypto

/// A failing HMAC computation is an error the caller sees, not a trap that kills the process
/// (a server verifying a request must answer 500, not crash).
@Suite struct HMACFailureTests {
    @Test func aLibcryptoFailureThrows() {
        // No digest: HMAC() returns NULL, as it would when memory runs out.
        #expect(throws: CryptoError.self) { try HMACSHA256.authenticationCode(for: [1, 2, 3], key: [4, 5, 6], digest: nil) }
    }

    @Test func emptyKeyAndMessageAreFine() throws {
        // RFC 4231 has no empty case; this is HMAC-SHA256("", "") as computed by `openssl mac`.
        #expect(Hex.encode(try HMACSHA256.authenticationCode(for: [UInt8](), key: [UInt8]()))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
        let code = try HMACSHA256.authenticationCode(for: [UInt8](), key: [UInt8]())
        #expect(try HMACSHA256.isValid(code, for: [UInt8](), key: [UInt8]()))
        #expect(try !HMACSHA256.isValid(Array(code.dropLast()), for: [UInt8](), key: [UInt8]()))
    }
}
