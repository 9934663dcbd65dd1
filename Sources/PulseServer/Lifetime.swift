/// Durations on the command line: `90s`, `30m`, `2h`, `7d` (a bare number is seconds).
public enum Lifetime {
    /// Seconds, or nil for anything else (or more than a year).
    public static func seconds(_ text: String) -> Int64? {
        guard let last = text.last else { return nil }
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        let (digits, unit) = last.isNumber ? (Substring(text), Int64(1)) : (text.dropLast(), units[last] ?? 0)
        guard unit > 0, !digits.isEmpty, digits.count <= 8, digits.allSatisfy({ $0 >= "0" && $0 <= "9" }), let number = Int64(digits) else {
            return nil
        }
        let seconds = number * unit
        return (1...366 * 86_400).contains(seconds) ? seconds : nil
    }
}
