import PulseHTML
import Testing

@Suite struct PlainTextTests {
    @Test func controlsLineBreaksAndBidiAreSpelledOut() {
        #expect(PlainText.escaped("Zoë's iPhone 🙂 会議") == "Zoë's iPhone 🙂 会議")
        #expect(PlainText.escaped("evil\u{1B}[2J\u{1B}]0;owned\u{07}") == "evil\\u{1B}[2J\\u{1B}]0;owned\\u{7}")
        #expect(PlainText.escaped("two\nlines\r\tand\\more") == "two\\nlines\\r\\tand\\\\more")
        #expect(PlainText.escaped("a\u{0}b\u{7F}c\u{85}d\u{9B}e") == "a\\u{0}b\\u{7F}c\\u{85}d\\u{9B}e")
        #expect(PlainText.escaped("x\u{2028}y\u{2029}z") == "x\\u{2028}y\\u{2029}z")
        // "Trojan Source": right-to-left override, isolates, marks, the Arabic letter mark, a BOM.
        #expect(PlainText.escaped("admin\u{202E}gnp.exe") == "admin\\u{202E}gnp.exe")
        #expect(PlainText.escaped("\u{2066}\u{2067}\u{2068}\u{2069}\u{200E}\u{200F}\u{61C}\u{FEFF}")
            == "\\u{2066}\\u{2067}\\u{2068}\\u{2069}\\u{200E}\\u{200F}\\u{61C}\\u{FEFF}")
        // Joiners used by emoji and scripts stay.
        #expect(PlainText.escaped("👩\u{200D}💻 \u{200C}") == "👩\u{200D}💻 \u{200C}")
    }

    @Test func escapingIsUnambiguous() {
        let inputs = ["a\nb", "a\\nb", "a\\\nb", "\u{1B}", "\\u{1B}", "\\", "\\\\", "", " "]
        let outputs = inputs.map(PlainText.escaped)
        #expect(Set(outputs).count == inputs.count)
        #expect(outputs.allSatisfy { !$0.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } })
    }
}
