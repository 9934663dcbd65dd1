import Foundation
import PulseCore

/// Checks of values whose shape is right but whose meaning is impossible: a day that does not exist, a
/// time zone that is not in the tz database, an end before its start, an id given twice.
extension JSONReader {
    /// A `YYYY-MM-DD` date that exists in the calendar.
    func date(_ key: String) throws -> String {
        let value = try string(key, matching: Patterns.date, what: "a date YYYY-MM-DD")
        if let problem = CalendarTime.dateProblem(value) { throw error(key, problem) }
        return value
    }

    /// An ISO 8601 time with offset that exists (`2026-12-03T09:00:00+01:00`), and its instant.
    func time(_ key: String) throws -> (text: String, seconds: Int) {
        let value = try string(key, matching: Patterns.time, what: "an ISO 8601 time with offset")
        return (value, try instant(key, value))
    }

    func optionalTime(_ key: String) throws -> String? {
        guard let value = try optionalString(key, matching: Patterns.time, what: "an ISO 8601 time with offset") else { return nil }
        _ = try instant(key, value)
        return value
    }

    private func instant(_ key: String, _ value: String) throws -> Int {
        switch CalendarTime.instant(value) {
        case let .success(seconds): seconds
        case let .failure(problem): throw error(key, problem.message)
        }
    }

    /// An IANA time zone of the system's tz database (`Europe/Lisbon`), with a suggestion when mistyped.
    func timeZone(_ key: String) throws -> String {
        guard let value = try optionalTimeZone(key) else { throw error(key, "missing (expected an IANA time zone such as \"Europe/Berlin\")") }
        return value
    }

    func optionalTimeZone(_ key: String) throws -> String? {
        guard let value = try optionalString(key) else { return nil }
        guard TimeZones.isKnown(value) else {
            throw error(key, "\"\(value)\" is not a time zone of the tz database" + Suggestion.didYouMean(value, among: TimeZones.all)
                + " (IANA names such as \"Europe/Berlin\", \"America/New_York\", \"UTC\")")
        }
        return value
    }
}

/// Ids must be unique within a list (speakers, rooms, items, resources, questions): the app keys its
/// views by them, and a second one would silently shadow the first.
func checkUniqueIds(_ items: [JSONValue], list: String, in file: String, path: (Int) -> String) throws {
    var first: [String: Int] = [:]
    for (index, item) in items.enumerated() {
        guard let id = item["id"]?.stringValue else { continue }
        if let earlier = first[id] {
            throw InputError(file: file, path: "\(path(index)).id", "\"\(id)\" is already the id of \(path(earlier)): \(list) ids must be unique")
        }
        first[id] = index
    }
}

/// Dates and times as the input schema writes them, checked against the calendar.
enum CalendarTime {
    struct Problem: Error { let message: String }

    /// Nil if `YYYY-MM-DD…` names a day that exists, else why not.
    static func dateProblem(_ text: String) -> String? {
        let digits = Array(text.utf8)
        let year = number(digits, 0, 4), month = number(digits, 5, 2), day = number(digits, 8, 2)
        guard (1...12).contains(month) else { return "\(text.prefix(10)): there is no month \(month)" }
        let days = daysIn(month: month, year: year)
        guard (1...days).contains(day) else {
            return "\(text.prefix(10)): \(monthNames[month - 1]) \(year) has \(days) days"
        }
        return nil
    }

    /// Seconds since 1970 of a time already shaped like `Patterns.time`; a failure says which part is impossible.
    static func instant(_ text: String) -> Result<Int, Problem> {
        if let problem = dateProblem(text) { return .failure(Problem(message: problem)) }
        let digits = Array(text.utf8)
        let hour = number(digits, 11, 2), minute = number(digits, 14, 2)
        let second = digits.count > 16 && digits[16] == UInt8(ascii: ":") ? number(digits, 17, 2) : 0
        guard hour < 24, minute < 60, second < 60 else { return .failure(Problem(message: "\(text): there is no time \(hour):\(minute < 10 ? "0" : "")\(minute) in a day")) }
        var offset = 0
        if digits.last != UInt8(ascii: "Z") {
            let sign = digits[digits.count - 6] == UInt8(ascii: "-") ? -1 : 1
            let hours = number(digits, digits.count - 5, 2), minutes = number(digits, digits.count - 2, 2)
            guard hours <= 14, minutes < 60 else { return .failure(Problem(message: "\(text): offset \(text.suffix(6)) is not a UTC offset (-14:00 to +14:00)")) }
            offset = sign * (hours * 3600 + minutes * 60)
        }
        let days = daysFromEpoch(year: number(digits, 0, 4), month: number(digits, 5, 2), day: number(digits, 8, 2))
        return .success(days * 86_400 + hour * 3600 + minute * 60 + second - offset)
    }

    private static let monthNames = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]

    private static func number(_ digits: [UInt8], _ start: Int, _ count: Int) -> Int {
        digits[start..<start + count].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 (proleptic Gregorian; Howard Hinnant's days_from_civil).
    private static func daysFromEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

/// The IANA time zones of the system's tz database.
enum TimeZones {
    static let database = "/usr/share/zoneinfo"

    /// True for a zone name of the tz database (`Europe/Lisbon`, `UTC`), never for a file of another
    /// kind there (`zone.tab`, `posix/…`) or a custom offset Foundation would make up (`GMT+1`).
    static func isKnown(_ name: String) -> Bool {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        guard !parts.isEmpty, parts.allSatisfy({ part in
            guard let first = part.first, first.isUppercase, first.isASCII else { return false }
            return part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_+-".contains($0)) }
        }) else { return false }
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: database, isDirectory: &isFolder), isFolder.boolValue {
            return FileManager.default.fileExists(atPath: "\(database)/\(name)", isDirectory: &isFolder) && !isFolder.boolValue
        }
        return TimeZone(identifier: name)?.identifier == name
    }

    /// Names to suggest from.
    static var all: [String] { TimeZone.knownTimeZoneIdentifiers + ["UTC"] }
}
