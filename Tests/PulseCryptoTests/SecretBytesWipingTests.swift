import Testing
@testable import PulseCrypto

/// Taking key material out of arrays, and the primitives that accept `SecretBytes` directly.
@Suite struct SecretBytesWipingTests {
    @Test func wipingInitZeroesTheArray() {
        var bytes: [UInt8] = [1, 2, 3, 4, 5]
        let secret = SecretBytes(wiping: &bytes)
        #expect(secret.isEqual(to: [1, 2, 3, 4, 5] as [UInt8]))
        #expect(bytes == [0, 0, 0, 0, 0])
        var empty: [UInt8] = []
        #expect(SecretBytes(wiping: &empty).count == 0)
    }

    @Test func hkdfAndX25519TakeSecretBytes() throws {
        let ikm = [UInt8](repeating: 0x0b, count: 22)
        let fromArray = try HKDF.sha256(inputKeyMaterial: ikm, salt: [1], info: [2], count: 42)
        #expect(try HKDF.sha256(inputKeyMaterial: SecretBytes(ikm), salt: [1], info: [2], count: 42) == fromArray)
        #expect(try HKDF.sha256(inputKeyMaterial: SecretBytes([UInt8]()), salt: [], info: [], count: 32)
                == HKDF.sha256(inputKeyMaterial: [UInt8](), salt: [], info: [], count: 32))
        let key = try X25519.generatePrivateKey()
        let array = key.withUnsafeBytes { Array($0) }
        #expect(try X25519.publicKey(privateKey: key) == X25519.publicKey(privateKey: array))
    }
}
