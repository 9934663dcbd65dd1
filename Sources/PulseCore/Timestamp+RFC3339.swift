extension Timestamp {
    /// Unix seconds of an RFC 3339 date-time (`2026-12-01T14:00:00Z`, `2026-12-01T15:00:00.250+01:00`;
    /// `t` and `z` in either case; a fraction is dropped), nil for anything else: a date that does not
    /// exist (30 February), a leap second, more than 9 fraction digits, more than 35 characters.
    public static func rfc3339Seconds(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard (20...35).contains(bytes.count), bytes[4] == 0x2d, bytes[7] == 0x2d, bytes[10] | 0x20 == 0x74, bytes[13] == 0x3a,
              bytes[16] == 0x3a else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            bytes[range].allSatisfy { $0 >= 0x30 && $0 <= 0x39 } ? BoundedDecimal.parse(bytes[range]) : nil
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
              let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year), hour < 24, minute < 60, second < 60
        else { return nil }
        var index = 19
        if bytes[index] == 0x2e {
            let start = index + 1
            index = start
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
            guard (1...9).contains(index - start) else { return nil }
        }
        guard index < bytes.count else { return nil }
        var offset = 0
        if bytes[index] | 0x20 == 0x7a {
            guard index + 1 == bytes.count else { return nil }
        } else {
            guard bytes[index] == 0x2b || bytes[index] == 0x2d, index + 6 == bytes.count, bytes[index + 3] == 0x3a,
                  let hours = number((index + 1)..<(index + 3)), let minutes = number((index + 4)..<(index + 6)), hours < 24, minutes < 60
            else { return nil }
            offset = (hours * 60 + minutes) * 60 * (bytes[index] == 0x2b ? 1 : -1)
        }
        var head = Array(bytes[0..<19])
        head[10] = 0x54  // T
        guard let date = Timestamp.date(String(decoding: head, as: UTF8.self) + "Z") else { return nil }
        // Years 0000 to 9999 and an offset under a day: far inside Int64.
        return Int64(date.timeIntervalSince1970) - Int64(offset)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
