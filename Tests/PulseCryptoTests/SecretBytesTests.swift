import PulseCrypto
import Testing

@Suite struct SecretBytesTests {
    @Test func neverPrintsItsBytes() throws {
        let secret = SecretBytes(Array("hunter2-hunter2-hunter2-hunter2!".utf8))
        #expect("\(secret)" == "<secret: 32 bytes>")
        #expect(String(reflecting: secret) == "<secret: 32 bytes>")
        var dumped = ""
        dump(secret, to: &dumped)
        #expect(!dumped.contains("hunter2"))
    }

    @Test func holdsAndComparesItsBytes() throws {
        let bytes: [UInt8] = [1, 2, 3, 4]
        let secret = SecretBytes(bytes)
        #expect(secret.count == 4)
        #expect(secret.withUnsafeBytes { Array($0) } == bytes)
        #expect(secret.isEqual(to: bytes))
        #expect(!secret.isEqual(to: [1, 2, 3, 5] as [UInt8]))
        #expect(!secret.isEqual(to: [1, 2, 3] as [UInt8]))
        let random = try SecretBytes.random(count: 32)
        #expect(random.count == 32)
        #expect(!random.isEqual(to: [UInt8](repeating: 0, count: 32)))
        #expect(SecretBytes([UInt8]()).count == 0)
    }
}
