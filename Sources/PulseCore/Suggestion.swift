/// "did you mean …?" for a mistyped name: a command, an option, a field of an input file, a time zone.
public enum Suggestion {
    /// The candidate `typed` most likely meant, or nil when none is close: the fewest edits (insert,
    /// delete, replace, swap two neighbours; case ignored), at most about a third of the name's length
    /// (at least 1, at most 3), or a candidate that the typed name starts with or that starts with it
    /// (`--output` → `--out`, `photos` → `photo`). Ties go to the first candidate.
    public static func closest(to typed: String, among candidates: some Sequence<String>) -> String? {
        let word = Array(typed.lowercased())
        guard !word.isEmpty else { return nil }
        var best: (name: String, distance: Int)?
        for candidate in candidates where candidate != typed {
            let other = Array(candidate.lowercased())
            var distance = editDistance(word, other)
            let shorter = min(word.count, other.count)
            if distance > limit(word.count), shorter >= 3, word.starts(with: other) || other.starts(with: word) {
                distance = limit(word.count)  // a prefix: as good as the worst acceptable edit
            }
            guard distance <= limit(word.count) else { continue }
            if best == nil || distance < best!.distance { best = (candidate, distance) }
        }
        return best?.name
    }

    /// `did you mean "photo"?`, or "" when there is no close candidate (so it can be appended).
    public static func didYouMean(_ typed: String, among candidates: some Sequence<String>, quoted: Bool = true) -> String {
        guard let name = closest(to: typed, among: candidates) else { return "" }
        return quoted ? "; did you mean \"\(name)\"?" : "; did you mean \(name)?"
    }

    /// Edits allowed for a name of `length` characters: 1 up to 3 characters, 2 up to 6, then 3.
    private static func limit(_ length: Int) -> Int { min(3, max(1, (length + 2) / 3)) }

    /// Optimal string alignment distance (Levenshtein with adjacent transpositions).
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}
