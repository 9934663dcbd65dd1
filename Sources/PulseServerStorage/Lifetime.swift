import PulseCore

/// Durations on the command line: `90s`, `30m`, `2h`, `7d` (a bare number is seconds).
public enum Lifetime {
    /// Seconds, or nil for anything else (or more than a year).
    public static func seconds(_ text: String) -> Int64? {
        guard let last = text.last else { return nil }
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        let (digits, unit) = last.isNumber ? (Substring(text), Int64(1)) : (text.dropLast(), units[last] ?? 0)
        // At most 8 digits times a day's seconds: far inside Int64.
        guard unit > 0, let number = BoundedDecimal.parse(digits, maxDigits: 8) else { return nil }
        let seconds = Int64(number) * unit
        return (1...366 * 86_400).contains(seconds) ? seconds : nil
    }
}
