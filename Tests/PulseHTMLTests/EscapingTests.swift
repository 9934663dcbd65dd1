import Foundation
import PulseHTML
import Testing

@Suite struct EscapingTests {
    /// What a device may send as its name, platform or build.
    static let hostile: [String] = [
        "<img src=x onerror=alert(1)>",
        "</script><script>alert(1)</script>",
        "</title></td></tr></table><svg onload=alert(1)>",
        "\" onmouseover=\"alert(1)",
        "' onfocus='alert(1)' autofocus x='",
        "AT&T &amp; &lt;b&gt; &#60; &#x3c;",
        "<!-- comment --> <![CDATA[x]]> <!doctype html>",
        "line\u{2028}separator\u{2029}paragraph",
        "javascript:alert(1)",
        "`backtick` ${template}",
    ]

    @Test(arguments: hostile)
    func hostileTextAndAttributeValuesComeOutAsThemselves(_ value: String) throws {
        let node = p(.title(value), Attribute("data-name", value)) { value }
        let events = try HTMLOracle.events(node)
        // One element, its two attributes exactly as given, its text exactly as given: nothing else parsed,
        // and the only markup characters are the builder's own.
        #expect(events == [["start", "p", "title", value, "data-name", value], ["text", value], ["end", "p"]])
        let html = node.renderedString
        #expect(html.filter { $0 == "<" }.count == 2 && html.filter { $0 == "\"" }.count == 4)
    }

    @Test func exactEscapes() {
        #expect(span { "<&>\"'" }.renderedString == "<span>&lt;&amp;&gt;&quot;&#39;</span>")
        #expect(span(.title("a\"b'c<d>&")).renderedString == "<span title=\"a&quot;b&#39;c&lt;d&gt;&amp;\"></span>")
        #expect(span { "a\u{2028}b\u{2029}c" }.renderedString == "<span>a&#x2028;b&#x2029;c</span>")
        // Tab, line feed and carriage return stay; other controls, DEL and C1 become U+FFFD.
        #expect(span { "a\tb\nc\rd" }.renderedString == "<span>a\tb\nc\rd</span>")
        #expect(span { "a\u{0}b\u{1B}[2Jc\u{7F}d\u{85}e\u{9B}f" }.renderedString == "<span>a\u{FFFD}b\u{FFFD}[2Jc\u{FFFD}d\u{FFFD}e\u{FFFD}f</span>")
        // Non-ASCII letters and emoji are untouched, and so are look-alikes of the escaped sequences.
        #expect(span { "é 会議 🙂 \u{E2}\u{A7} ¢ \u{A0}" }.renderedString == "<span>é 会議 🙂 \u{E2}\u{A7} ¢ \u{A0}</span>")
        #expect(span { "\u{2027}\u{202A}\u{A0}" }.renderedString == "<span>\u{2027}\u{202A}\u{A0}</span>")
    }

    @Test func everyASCIICharacterHasTheRightClass() {
        let entities: [UInt8: String] = [0x26: "&amp;", 0x3C: "&lt;", 0x3E: "&gt;", 0x22: "&quot;", 0x27: "&#39;"]
        for byte in UInt8(0)...0x7F {
            let character = String(UnicodeScalar(byte))
            let expected = entities[byte] ?? ((byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D) || byte == 0x7F ? "\u{FFFD}" : character)
            #expect(Node.text("a\(character)b").renderedString == "a\(expected)b", "byte \(byte)")
            #expect(Node.text(character).renderedString == expected, "byte \(byte) alone")
        }
    }

    @Test func invalidUTF8FromADeviceBecomesReplacementCharacters() throws {
        // A truncated sequence, an overlong NUL, a lone surrogate half, bytes that never occur in UTF-8.
        let bytes: [UInt8] = [0x50, 0xE2, 0x82, 0x51, 0xC0, 0x80, 0x52, 0xED, 0xA0, 0x80, 0x53, 0xFF, 0xFE, 0x3C]
        let node = td { Node.text(utf8: bytes) }
        let html = node.render()
        #expect(String(validating: html, as: UTF8.self) != nil)
        #expect(node.renderedString == "<td>P\u{FFFD}Q\u{FFFD}\u{FFFD}R\u{FFFD}\u{FFFD}\u{FFFD}S\u{FFFD}\u{FFFD}&lt;</td>")
        #expect(try HTMLOracle.events(node) == [["start", "td"], ["text", "P\u{FFFD}Q\u{FFFD}\u{FFFD}R\u{FFFD}\u{FFFD}\u{FFFD}S\u{FFFD}\u{FFFD}<"], ["end", "td"]])
        // The same bytes made into a String elsewhere (String(decoding:)) render the same.
        #expect(td { String(decoding: bytes, as: UTF8.self) }.render() == html)
    }

    @Test func controlsAreInertForTheParserToo() throws {
        let value = "a\u{0}b\u{1B}c\u{9B}d\u{2028}e"
        let events = try HTMLOracle.events(span(.title(value)) { value })
        let shown = "a\u{FFFD}b\u{FFFD}c\u{FFFD}d\u{2028}e"
        #expect(events == [["start", "span", "title", shown], ["text", shown], ["end", "span"]])
    }

    @Test func titleAndTextareaHoldTextOnly() throws {
        let value = "</title><script>alert(1)</script></textarea>"
        let node = Node.fragment { title(value); textarea(.name("note"), text: value) }
        #expect(node.renderedString == "<title>&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;/textarea&gt;</title>"
            + "<textarea name=\"note\">&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;/textarea&gt;</textarea>")
        #expect(try HTMLOracle.events(node) == [
            ["start", "title"], ["text", value], ["end", "title"], ["start", "textarea", "name", "note"], ["text", value], ["end", "textarea"],
        ])
    }
}
