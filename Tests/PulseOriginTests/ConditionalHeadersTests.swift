import Testing
@testable import PulseOrigin

@Suite struct ConditionalHeadersTests {
    let tag = Array("abc".utf8)

    @Test func rangeParsing() {
        typealias R = ConditionalHeaders.RangeResult
        func range(_ text: String, _ length: Int = 100) -> R { ConditionalHeaders.range(Array(text.utf8), length: length) }
        #expect(range("bytes=0-99") == .part(first: 0, last: 99))
        #expect(range("Bytes=5-") == .part(first: 5, last: 99))
        #expect(range("bytes=-200") == .part(first: 0, last: 99))
        #expect(range("bytes=100-") == .unsatisfiable)
        #expect(range("bytes=0-", 0) == .unsatisfiable)
        #expect(range("bytes=99999999999999999999-") == .whole)
        #expect(range("bytes=-") == .whole)
        #expect(range("bytes=1-2, 4-5") == .whole)
    }
}
