/// Byte counts as every tool prints and reads them: SI units (1 kB = 1000 B), one decimal, with the exact
/// count in JSON output. `1.2 MB`, `512 B`.
public enum ByteCount {
    /// `0 B`, `999 B`, `1.0 kB`, `12.3 MB`, `1.5 GB`.
    public static func format(_ count: Int) -> String {
        let units = ["B", "kB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while abs(value) >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        if unit == 0 { return "\(count) B" }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(abs(tenths % 10)) \(units[unit])"
    }

    /// Parses `2000000`, `500kB`, `2MB`, `2M`, `1.5GB` (SI), or `512KiB`, `2MiB`, `1GiB` (powers of 1024).
    /// Case is ignored; a number without a unit is bytes. Nil if `text` is none of these.
    public static func parse(_ text: String) -> Int? {
        let lower = text.lowercased().replacingOccurrences(of: " ", with: "")
        let units: [(String, Double)] = [
            ("kib", 1024), ("mib", 1_048_576), ("gib", 1_073_741_824),
            ("kb", 1e3), ("mb", 1e6), ("gb", 1e9), ("k", 1e3), ("m", 1e6), ("g", 1e9), ("b", 1),
        ]
        var number = Substring(lower)
        var factor = 1.0
        for (suffix, value) in units where lower.hasSuffix(suffix) {
            number = lower.dropLast(suffix.count)
            factor = value
            break
        }
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), let value = Double(number) else { return nil }
        let bytes = (value * factor).rounded()
        guard bytes >= 0, bytes < 1e15 else { return nil }
        return Int(bytes)
    }
}
