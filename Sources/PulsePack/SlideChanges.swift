import PulseCore

/// Which slides of a session changed between two manifests, by number: what an organizer recognises
/// (`slide 3 changed`, `slides 5–7 added`), where the delta plan only knows hashes.
public struct SlideChanges: Sendable, Equatable {
    /// Manifest slide indexes `n` (0-based) whose blob differs, that only the new manifest has, and
    /// that only the old one had.
    public var changed: [Int] = []
    public var added: [Int] = []
    public var removed: [Int] = []

    public init(old: JSONValue, new: JSONValue) {
        let before = Self.slides(old), after = Self.slides(new)
        for (n, hash) in after.sorted(by: { $0.key < $1.key }) {
            switch before[n] {
            case nil: added.append(n)
            case hash?: break
            default: changed.append(n)
            }
        }
        removed = before.keys.filter { after[$0] == nil }.sorted()
    }

    public var isEmpty: Bool { changed.isEmpty && added.isEmpty && removed.isEmpty }

    /// `slide 3 changed`, `slides 5–7 added`: numbered from 1 as the deck's pages are (n + 1).
    public var lines: [String] {
        Self.runs(changed).map { "\($0) changed" } + Self.runs(added).map { "\($0) added" } + Self.runs(removed).map { "\($0) removed" }
    }

    public var json: JSONValue {
        ["changed": .array(changed.map(JSONValue.int)), "added": .array(added.map(JSONValue.int)), "removed": .array(removed.map(JSONValue.int))]
    }

    private static func slides(_ manifest: JSONValue) -> [Int: Digest] {
        var result: [Int: Digest] = [:]
        for slide in manifest["slides"]?.arrayValue ?? [] {
            if let n = slide["n"]?.intValue, let hash = slide["assetHash"]?.digestValue { result[n] = hash }
        }
        return result
    }

    /// Consecutive indexes grouped: [2, 4, 5, 6] → `slide 3`, `slides 5–7` (page numbers).
    private static func runs(_ indexes: [Int]) -> [String] {
        var groups: [ClosedRange<Int>] = []
        for n in indexes {
            if let last = groups.last, last.upperBound == n - 1 { groups[groups.count - 1] = last.lowerBound...n } else { groups.append(n...n) }
        }
        return groups.map { $0.count == 1 ? "slide \($0.lowerBound + 1)" : "slides \($0.lowerBound + 1)–\($0.upperBound + 1)" }
    }
}
