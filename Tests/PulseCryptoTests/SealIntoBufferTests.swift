import PulseCrypto
import Testing

/// Sealing into a kept buffer (the image pipeline's path) writes exactly what `seal` returns, and the
/// digest hashed piece by piece as it is written is the SHA-256 of those bytes.
@Suite struct SealIntoBufferTests {
    let key = (0..<32).map { UInt8($0) }
    let nonce = (0..<12).map { UInt8(0xa0 + $0) }

    /// Plaintexts on both sides of the hashed piece's size (64 KiB), and empty.
    static let sizes = [0, 1, 15, 16, 65_535, 65_536, 65_537, 3 * 65_536 + 5, 300_001]

    @Test(arguments: sizes) func sealsIntoABufferWhatSealReturns(size: Int) throws {
        let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let expected = try AES256GCM.seal(plaintext, key: key, nonce: nonce)

        var fresh: [UInt8] = []
        let count = try AES256GCM.seal(plaintext, key: key, nonce: nonce, into: &fresh)
        #expect(count == size + AES256GCM.tagByteCount)
        #expect(Array(fresh[..<count]) == expected)

        // A buffer longer than needed, full of other bytes: the start is the blob, the rest stays.
        var used = [UInt8](repeating: 0xee, count: size + 1000)
        let (hashedCount, digest) = try AES256GCM.sealHashing(plaintext, key: key, nonce: nonce, into: &used)
        #expect(hashedCount == expected.count)
        #expect(Array(used[..<hashedCount]) == expected)
        #expect(used[hashedCount...].allSatisfy { $0 == 0xee })
        #expect(used.count == size + 1000)
        #expect(digest == SHA256.hash(expected))
        #expect(try AES256GCM.open(used[..<hashedCount], key: key, nonce: nonce) == plaintext)
    }

    @Test func aBufferSealedIntoAgainHoldsTheNewBlob() throws {
        var buffer: [UInt8] = []
        let long = [UInt8](repeating: 1, count: 200_000), short = [UInt8](repeating: 2, count: 10)
        _ = try AES256GCM.sealHashing(long, key: key, nonce: nonce, into: &buffer)
        let (count, digest) = try AES256GCM.sealHashing(short, key: key, nonce: nonce, into: &buffer)
        #expect(Array(buffer[..<count]) == (try AES256GCM.seal(short, key: key, nonce: nonce)))
        #expect(digest == SHA256.hash(buffer[..<count]))
    }

    @Test func keysHeldAsSecretsSealTheSame() throws {
        let plaintext = [UInt8](repeating: 9, count: 70_000)
        var buffer: [UInt8] = []
        let (count, digest) = try AES256GCM.sealHashing(plaintext, key: SecretBytes(key), nonce: SecretBytes(nonce), into: &buffer)
        #expect(Array(buffer[..<count]) == (try AES256GCM.seal(plaintext, key: key, nonce: nonce)))
        #expect(digest == SHA256.hash(buffer[..<count]))
        #expect(throws: CryptoError.self) { try AES256GCM.sealHashing(plaintext, key: Array(key.prefix(16)), nonce: nonce, into: &buffer) }
    }
}
