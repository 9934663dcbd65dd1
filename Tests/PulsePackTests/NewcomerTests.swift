import Foundation
import PulseCore
import PulseStore
import PulseTestSupport
import Testing

@testable import PulsePack

/// What a new organizer hit (issue 11): JSON errors with their position, typos and impossible values
/// refused with one line naming the file and the field, suggestions for mistyped names.
struct NewcomerTests {
    /// The samples copied into `folder`, with `edit` applied to one file's text.
    static func samples(in folder: TestFolder, edit file: String, _ edit: (String) -> String) throws -> URL {
        let copy = try Support.copy(Support.samples, to: folder.url.appendingPathComponent("Samples"))
        let url = copy.appendingPathComponent(file)
        let text = try String(contentsOf: url, encoding: .utf8)
        let edited = edit(text)
        #expect(edited != text, "the edit must change \(file)")
        try Data(edited.utf8).write(to: url)
        return copy
    }

    /// Builds the edited samples; expects exit 65 and one error line that ends with `message`.
    func expectRefused(file: String, _ message: String, name: String = #function, _ edit: (String) -> String) throws {
        let folder = try TestFolder(name)
        let samples = try Self.samples(in: folder, edit: file, edit)
        let out = samples.deletingLastPathComponent().appendingPathComponent("pkg")
        let result = Support.cli(["build", samples.appendingPathComponent("series.json").path, "--out", out.path])
        #expect(result.code == 65, "\(result.err)")
        #expect(result.err.count == 1, "one line: \(result.err)")
        let line = result.err.first ?? ""
        #expect(line.hasPrefix("pulse-pack: error: \(samples.path)/\(file)"), "\(line)")
        #expect(line.contains(message), "\(line)\n  should contain: \(message)")
        #expect(!FileManager.default.fileExists(atPath: out.path), "nothing is written")
    }

    @Test func jsonErrorsGiveLineAndColumn() throws {
        try expectRefused(file: "sessions/keynote.json", ":4:3: missing ',' between fields") {
            $0.replacingOccurrences(of: #""Shipping Encrypted Slide Decks","#, with: #""Shipping Encrypted Slide Decks""#)
        }
        try expectRefused(file: "sessions/keynote.json", ":2:3: comments are not allowed in JSON") {
            $0.replacingOccurrences(of: "{\n", with: "{\n  // the keynote\n")
        }
        try expectRefused(file: "series.json", #":10:7: duplicate field "primary" (first at line 9, column 7)"#) {
            $0.replacingOccurrences(of: ##""primary": "#1A56DB","##, with: ##""primary": "#1A56DB",\##n      "primary": "#000000","##)
        }
        try expectRefused(file: "sessions/workshop.json", ":1:1: empty file: expected a JSON value") { _ in "" }
        try expectRefused(file: "sessions/keynote.json", ":3:21: raw tab in a string (write \\t)") {
            $0.replacingOccurrences(of: "Shipping Encrypted", with: "Shipping\tEncrypted")
        }
    }

    @Test func unknownFieldsSuggestTheKnownOne() throws {
        try expectRefused(file: "sessions/keynote.json", #"speakers[0].foto: unknown field; did you mean "photo"? (--lenient ignores unknown fields)"#) {
            $0.replacingOccurrences(of: #""photo""#, with: #""foto""#)
        }
        try expectRefused(file: "series.json", #"org.colors.backgroud: unknown field; did you mean "background"? (background is missing)"#) {
            $0.replacingOccurrences(of: #""background""#, with: #""backgroud""#)
        }
    }

    @Test func impossibleValuesAreRefused() throws {
        try expectRefused(file: "sessions/keynote.json",
                          #"timezone: "Europe/Lisbn" is not a time zone of the tz database; did you mean "Europe/Lisbon"? (IANA names such as "Europe/Berlin", "America/New_York", "UTC")"#) {
            $0.replacingOccurrences(of: "Europe/Berlin", with: "Europe/Lisbn")
        }
        try expectRefused(file: "series.json", ##"timezone: "GMT+1" is not a time zone of the tz database; did you mean "GMT"?"## + #" (IANA names such as "Europe/Berlin", "America/New_York", "UTC")"#) {
            $0.replacingOccurrences(of: "Europe/Berlin", with: "GMT+1")
        }
        try expectRefused(file: "series.json", "days[0].date: 2027-02-30: February 2027 has 28 days") {
            $0.replacingOccurrences(of: "2026-12-03", with: "2027-02-30")
        }
        try expectRefused(file: "sessions/keynote.json", "startsAt: 2026-12-32: December 2026 has 31 days") {
            $0.replacingOccurrences(of: "2026-12-03T09:30:00+01:00", with: "2026-12-32T09:30:00+01:00")
        }
        try expectRefused(file: "sessions/keynote.json", "endsAt: 2026-12-03T08:30:00+01:00 is not after startsAt 2026-12-03T09:30:00+01:00") {
            $0.replacingOccurrences(of: "2026-12-03T10:30:00+01:00", with: "2026-12-03T08:30:00+01:00")
        }
        try expectRefused(file: "sessions/keynote.json", "startsAt: 2026-12-03T24:30:00+01:00: there is no time 24:30 in a day") {
            $0.replacingOccurrences(of: "2026-12-03T09:30:00+01:00", with: "2026-12-03T24:30:00+01:00")
        }
    }

    @Test func duplicateIdsAreRefused() throws {
        try expectRefused(file: "sessions/keynote.json", #"speakers[1].id: "ada" is already the id of speakers[0]: speaker ids must be unique"#) {
            $0.replacingOccurrences(of: #""id": "grace""#, with: #""id": "ada""#).replacingOccurrences(of: #""grace""#, with: #""ada""#)
        }
        try expectRefused(file: "series.json", #"rooms[1].id: "main-hall" is already the id of rooms[0]: room ids must be unique"#) {
            $0.replacingOccurrences(of: #""id": "lab""#, with: #""id": "main-hall""#).replacingOccurrences(of: #""room": "lab""#, with: #""room": "main-hall""#)
        }
        try expectRefused(file: "series.json", #"days[0].items[1].id: "d1-registration" is already the id of days[0].items[0]: item ids must be unique"#) {
            $0.replacingOccurrences(of: #""id": "d1-keynote""#, with: #""id": "d1-registration""#)
        }
    }

    @Test func aSessionOfAnotherSeriesIsRefused() throws {
        try expectRefused(file: "sessions/workshop.json", #"series: names series "devconf-2025", but it is built by series "devconf-2026" ("#, name: #function) {
            $0.replacingOccurrences(of: #""series": "devconf-2026""#, with: #""series": "devconf-2025""#)
        }
    }
}
