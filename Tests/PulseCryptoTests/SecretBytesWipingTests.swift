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

    /// The operations that let callers outside the wrappers read a secret without a pointer.
    @Test func prefixAndCopiesWithoutPointers() throws {
        let secret = SecretBytes([UInt8](1...20))
        #expect(secret.prefix(4) == [1, 2, 3, 4])
        #expect(secret.prefix(50) == [UInt8](1...20))
        #expect(secret.prefix(0) == [] && secret.prefix(-1) == [])
        #expect(SecretBytes([UInt8]()).prefix(12) == [])
        var copy = secret.copyBytes()
        #expect(copy == [UInt8](1...20))
        SecretBytes.wipe(&copy)
        #expect(copy == [UInt8](repeating: 0, count: 20))
        #expect(secret.isEqual(to: [UInt8](1...20)), "wiping the copy leaves the secret")
        #expect(secret.withCopiedBytes { $0.reduce(0, +) } == 210)
        struct Refused: Error {}
        #expect(throws: Refused.self) { try secret.withCopiedBytes { _ in throw Refused() } }
        // AES-GCM with secrets as key and nonce goes through the copies too.
        let key = try SecretBytes.random(count: 32), nonce = try SecretBytes.random(count: 12)
        let sealed = try AES256GCM.seal([1, 2, 3], key: key, nonce: nonce)
        #expect(try AES256GCM.open(sealed, key: key, nonce: nonce) == [1, 2, 3])
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
