import PulseCrypto
import Testing

@testable import PulseServer
@testable import PulseServerStorage

@Suite struct ReplayKeyTests {
    static let r = [UInt8](repeating: 0x11, count: 32)

    @Test func bothFormsOfAMalleableSignatureHaveOneKey() throws {
        let s = Hex.decode("7fffffff800000007fffffffffffffffde737d56d38bcf4279dce5617e3192a7")!  // just below n/2
        let high = ReplayKey.subtract(ReplayKey.order, s)
        #expect(high != s)
        let low = try #require(ReplayKey.of(signature: Self.r + s))
        #expect(ReplayKey.of(signature: Self.r + high) == low)
        #expect(low == SHA256.hash(Self.r + s))  // the lower s is kept as it is
        #expect(ReplayKey.of(signature: [UInt8](repeating: 0x22, count: 32) + s) != low)
    }

    @Test func subtractionBorrowsAcrossBytes() {
        #expect(ReplayKey.subtract([1, 0, 0], [0, 0, 1]) == [0, 255, 255])
        #expect(ReplayKey.subtract(ReplayKey.order, ReplayKey.order) == [UInt8](repeating: 0, count: 32))
        var one = [UInt8](repeating: 0, count: 32)
        one[31] = 1
        #expect(ReplayKey.of(signature: Self.r + one) == ReplayKey.of(signature: Self.r + ReplayKey.subtract(ReplayKey.order, one)))
    }

    @Test func malformedSignaturesHaveNoKey() {
        #expect(ReplayKey.of(signature: Self.r) == nil)
        #expect(ReplayKey.of(signature: Self.r + [UInt8](repeating: 0, count: 32)) == nil)  // s = 0
        #expect(ReplayKey.of(signature: Self.r + ReplayKey.order) == nil)  // s = n
        #expect(ReplayKey.of(signature: Self.r + [UInt8](repeating: 0xff, count: 32)) == nil)  // s > n
    }
}
