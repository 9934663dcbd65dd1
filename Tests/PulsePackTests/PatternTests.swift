import Foundation
import PulseCore
import Testing

@testable import PulsePack

/// The hand-written field formats accept exactly what their documented regular expressions accept:
/// checked on valid examples and on every one-byte edit of them (replace, delete, insert).
@Suite struct PatternTests {
    static let cases: [(String, TextFormat, String, [String])] = [
        ("id", Patterns.id, "[a-z0-9][a-z0-9-]{0,63}", ["keynote", "day-1", "a", "0", String(repeating: "x", count: 64)]),
        ("color", Patterns.color, "#[0-9A-Fa-f]{6}", ["#00ff7F", "#ABCDEF"]),
        ("clock", Patterns.clock, "([01][0-9]|2[0-3]):[0-5][0-9]", ["00:00", "09:30", "19:59", "23:59"]),
        ("date", Patterns.date, "[0-9]{4}-[0-9]{2}-[0-9]{2}", ["2026-12-03"]),
        ("time", Patterns.time, "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?(Z|[+-][0-9]{2}:[0-9]{2})",
         ["2026-12-03T09:00+01:00", "2026-12-03T09:00:05Z", "2026-12-03T09:00:05.125-05:30", "2026-12-03T09:00:05.1Z"]),
    ]
    static let alphabet = Array("0123456789abfgzAFGZ-:+.#T é".unicodeScalars).map(String.init)

    @Test(arguments: 0..<cases.count) func agreesWithItsRegularExpression(_ index: Int) throws {
        let (name, format, pattern, examples) = Self.cases[index]
        // \z, not $: ICU's $ also matches before a final newline (which the old regex check let through).
        let regex = try NSRegularExpression(pattern: "^(?:\(pattern))\\z")
        func regexMatches(_ text: String) -> Bool {
            regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        }
        var inputs: Set<String> = ["", " ", "\n"]
        for example in examples {
            let characters = Array(example)
            inputs.insert(example)
            inputs.insert(example + "\n")
            for position in 0...characters.count {
                for letter in Self.alphabet { inputs.insert(String(characters[..<position]) + letter + String(characters[position...])) }
                guard position < characters.count else { continue }
                inputs.insert(String(characters[..<position]) + String(characters[(position + 1)...]))
                for letter in Self.alphabet { inputs.insert(String(characters[..<position]) + letter + String(characters[(position + 1)...])) }
            }
        }
        var accepted = 0
        for input in inputs {
            #expect(format.matches(input) == regexMatches(input), "\(name): \"\(input)\"")
            if regexMatches(input) { accepted += 1 }
        }
        #expect(accepted > examples.count)  // the edits reach accepted inputs as well as rejected ones
    }
}
