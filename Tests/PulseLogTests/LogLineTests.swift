import Foundation
import Testing
@testable import PulseLog

/// The JSON line formatter: valid JSON, valid UTF-8 and one line whatever the bytes, with the OpenTelemetry
/// field names.
@Suite struct LogLineTests {
    static let resource = LogResource(serviceName: "pulse-test", serviceVersion: "9.9.9")

    /// Parses one line as JSON after checking it is one line of valid UTF-8 without a control character.
    static func parse(_ line: [UInt8]) throws -> [String: Any] {
        #expect(line.last == 0x0a)
        let content = line.dropLast()
        #expect(!content.contains { $0 < 0x20 || $0 == 0x7f }, "a control byte in \(String(decoding: content, as: UTF8.self))")
        #expect(String(validating: content, as: UTF8.self) != nil, "not UTF-8")
        let object = try JSONSerialization.jsonObject(with: Data(content))
        return try #require(object as? [String: Any])
    }

    static func body(_ value: [UInt8]) throws -> (String, [UInt8]) {
        let line = LogLine(timestamp: Array("2026-12-03T10:52:46.000001Z".utf8), severity: .info, body: value).finished(resource)
        return (try #require(try parse(line)["Body"] as? String), line)
    }

    @Test func theFieldsHaveOpenTelemetryNames() throws {
        var line = LogLine(timestamp: Array("2026-12-03T10:52:46.123456Z".utf8), severity: .warn, body: "index.json unusable")
        line.attribute("pulse.note", "n")
        line.attribute("http.response.status_code", 503)
        line.attribute("http.server.request.duration", secondsFromNanoseconds: 1_234_567_891)
        line.attribute("pulse.aborted", true)
        let bytes = line.finished(Self.resource)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text == #"{"Timestamp":"2026-12-03T10:52:46.123456Z","SeverityText":"WARN","SeverityNumber":13,"Body":"index.json unusable","#
            + #""Attributes":{"pulse.note":"n","http.response.status_code":503,"http.server.request.duration":1.234567,"pulse.aborted":true},"#
            + #""Resource":{"service.name":"pulse-test","service.version":"9.9.9"}}"# + "\n")
        let object = try Self.parse(bytes)
        #expect(object["SeverityNumber"] as? Int == 13)
        #expect((object["Attributes"] as? [String: Any])?["http.server.request.duration"] as? Double == 1.234567)
        // No attribute: no Attributes member.
        let bare = String(decoding: LogLine(timestamp: Array("t".utf8), severity: .error, body: "x").finished(Self.resource), as: UTF8.self)
        #expect(bare == #"{"Timestamp":"t","SeverityText":"ERROR","SeverityNumber":17,"Body":"x","Resource":{"service.name":"pulse-test","service.version":"9.9.9"}}"# + "\n")
    }

    @Test func controlCharactersQuotesAndBackslashesAreEscaped() throws {
        let hostile = "a\"b\\c\nd\re\tf\u{8}\u{c}\u{0}\u{1b}[2J\u{7f}g"
        let (decoded, line) = try Self.body(Array(hostile.utf8))
        #expect(decoded == hostile)
        #expect(String(decoding: line, as: UTF8.self).contains(#"a\"b\\c\nd\re\tf\b\f\u0000\u001b[2J\u007fg"#))
    }

    /// Bidi overrides, isolates, zero-width characters, C1 controls and line separators are shown as `\uXXXX`,
    /// never obeyed by the terminal or viewer; other non-ASCII text is kept as it is.
    @Test func charactersThatReorderOrHideTextAreEscaped() throws {
        let hostile = "evil\u{202E}gnp.exe\u{2066}x\u{2069}\u{200B}\u{200F}\u{061C}\u{2028}\u{2029}\u{FEFF}\u{85}\u{9B}"
        let (decoded, line) = try Self.body(Array(hostile.utf8))
        #expect(decoded == hostile)
        let text = String(decoding: line, as: UTF8.self)
        for escape in [#"\u202e"#, #"\u2066"#, #"\u2069"#, #"\u200b"#, #"\u200f"#, #"\u061c"#, #"\u2028"#, #"\u2029"#, #"\ufeff"#, #"\u0085"#, #"\u009b"#] {
            #expect(text.contains(escape), "\(escape) not escaped")
        }
        #expect(!line.contains(0xe2) && !line.contains(0xc2), "a raw bidi or C1 character is in the line")
        let kept = "café 日本 😀 Ωmega"
        let (same, keptLine) = try Self.body(Array(kept.utf8))
        #expect(same == kept)
        #expect(String(decoding: keptLine, as: UTF8.self).contains(kept))
    }

    /// Bytes that are not well-formed UTF-8 become U+FFFD, one per byte that begins no valid sequence.
    @Test func invalidUTF8BecomesTheReplacementCharacter() throws {
        let cases: [([UInt8], String)] = [
            ([0x61, 0xff, 0x62], "a\u{FFFD}b"),
            ([0xc0, 0xaf], "\u{FFFD}\u{FFFD}"),  // overlong "/"
            ([0xed, 0xa0, 0x80], "\u{FFFD}\u{FFFD}\u{FFFD}"),  // a surrogate
            ([0xe2, 0x82], "\u{FFFD}\u{FFFD}"),  // truncated
            ([0xf4, 0x90, 0x80, 0x80], "\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}"),  // past U+10FFFF
            ([0x80, 0x41], "\u{FFFD}A"),  // a stray continuation
            ([0xe2, 0x80, 0xae], "\u{202E}"),  // valid, escaped
            ([0xf0, 0x9f, 0x98, 0x80], "😀"),
        ]
        for (bytes, expected) in cases {
            #expect(try Self.body(bytes).0 == expected, "\(bytes)")
        }
    }

    /// Random bytes, many times: every line parses and is one line of valid UTF-8.
    @Test func anyBytesMakeOneValidLine() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var line = LogLine(timestamp: Array("t".utf8), severity: .info, body: bytes)
            line.attribute("url.path", url: bytes[...])
            line.attribute("client.address", bytes: bytes[...])
            line.attribute("pulse.note", String(decoding: bytes, as: UTF8.self))
            _ = try Self.parse(line.finished(Self.resource))
        }
    }

    /// A URL part is percent-encoded where it holds what a URL cannot, so it stays ASCII and lossless.
    @Test func urlPartsArePercentEncoded() throws {
        var line = LogLine(timestamp: Array("t".utf8), severity: .info, body: "x")
        line.attribute("url.path", url: Array("/a b\n\u{7f}\"q\\é".utf8)[...] + [0xff])
        let bytes = line.finished(Self.resource)
        let attributes = try #require(try Self.parse(bytes)["Attributes"] as? [String: Any])
        #expect(attributes["url.path"] as? String == "/a%20b%0A%7F\"q\\%C3%A9%FF")
    }

    @Test func durationsAndNumbers() throws {
        func duration(_ nanoseconds: UInt64) throws -> String {
            var line = LogLine(timestamp: Array("t".utf8), severity: .info, body: "x")
            line.attribute("d", secondsFromNanoseconds: nanoseconds)
            line.attribute("n", -42)
            let text = String(decoding: line.finished(Self.resource), as: UTF8.self)
            #expect(text.contains(#""n":-42"#))
            let start = try #require(text.range(of: #""d":"#)?.upperBound)
            return String(text[start...].prefix { $0 != "," })
        }
        #expect(try duration(0) == "0.000000")
        #expect(try duration(412_999) == "0.000412")
        #expect(try duration(1_000_000_000) == "1.000000")
        #expect(try duration(61_500_000_000) == "61.500000")
    }

    @Test func timestampsAreRFC3339WithMicroseconds() {
        let clock = LogClock()
        #expect(String(decoding: clock.text(unixMicroseconds: 0), as: UTF8.self) == "1970-01-01T00:00:00.000000Z")
        #expect(String(decoding: clock.text(unixMicroseconds: 1_796_295_166_000_042), as: UTF8.self) == "2026-12-03T10:52:46.000042Z")
        #expect(String(decoding: clock.text(unixMicroseconds: 1_796_295_166_999_999), as: UTF8.self) == "2026-12-03T10:52:46.999999Z")
        #expect(String(decoding: clock.text(unixMicroseconds: 1_796_295_167_100_000), as: UTF8.self) == "2026-12-03T10:52:47.100000Z")
        #expect(String(decoding: clock.text(unixMicroseconds: 951_782_400_000_001), as: UTF8.self) == "2000-02-29T00:00:00.000001Z")
        let now = String(decoding: clock.now(), as: UTF8.self)
        #expect(now.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$"#, options: .regularExpression) != nil)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let parsed = formatter.date(from: now)
        #expect(parsed.map { abs($0.timeIntervalSinceNow) < 5 } == true)
    }

    @Test func formatsAreTextOrJSON() {
        #expect(LogFormat.allowed == "text or json")
        #expect(LogFormat(rawValue: "json") == .json && LogFormat(rawValue: "JSON") == nil)
    }
}
