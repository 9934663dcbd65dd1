import Testing

@testable import PulseHTTPServer

/// The one If-None-Match parser of pulse-origin and pulse-server (RFC 9110 §13.1.2).
@Suite struct IfNoneMatchTests {
    let tag = Array("abc".utf8)

    func matches(_ header: String) -> Bool { IfNoneMatch.matches(Array(header.utf8), tag: tag) }

    @Test func oneTag() {
        #expect(matches("\"abc\""))
        #expect(!matches("\"abcd\""))
        #expect(!matches("\"ab\""))
        #expect(!matches("\"\""))
    }

    @Test func listSyntax() {
        #expect(matches("\"x\", \"abc\""))
        #expect(matches(" W/\"x\",\t\"abc\""))
        #expect(matches("\"x\",,\"abc\" "))
        #expect(!matches("\"x\", \"y\""))
    }

    @Test func weakTagsCompareWeakly() {
        #expect(matches("W/\"abc\""))
        #expect(matches("\"x\", W/\"abc\""))
        #expect(!matches("w/\"abc\""))  // the W is upper case
        #expect(!matches("W/abc"))
    }

    @Test func star() {
        #expect(matches("*"))
        #expect(matches(" * "))
        #expect(matches("\"x\", *"))
    }

    @Test func badInputMatchesNothing() {
        #expect(!matches(""))
        #expect(!matches("abc"))
        #expect(!matches("\"abc"))
        #expect(!matches("W/"))
        #expect(!matches("\"x\" junk, \"abc\""))
        #expect(!matches("\u{0}\"abc\""))
    }

    @Test func lengthIsBounded() {
        let padding = String(repeating: " ", count: IfNoneMatch.maxBytes - 5)
        #expect(matches(padding + "\"abc\""))
        #expect(!matches(padding + " \"abc\""))
        #expect(!matches(String(repeating: "\"x\",", count: 10_000) + "\"abc\""))
    }
}
