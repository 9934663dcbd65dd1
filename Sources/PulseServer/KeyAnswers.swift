import PulseCore

/// The answers of `GET /api/sync/keys` for one key table, prepared once: every slide's entry
/// `{"keyB64":…,"n":…,"nonceB64":…}` written back to back with commas, and where each ends, so the
/// body for slides `0..<k` is one copy of a prefix between a fixed head and tail.
///
///     {"deckVersion":3,"released":[{"keyB64":"…","n":0,"nonceB64":"…"},…]}
///
/// The release decision is not made here: `ReleasePolicy.releasedSlides` gives the range, this only
/// writes it. Never printed (a key in a log line is a leak).
struct KeyAnswers: Sendable, CustomStringConvertible {
    let deckVersion: Int
    let slideCount: Int
    private let head: [UInt8]
    private let entries: [UInt8]
    /// `ends[k]`: the length of the entries of slides `0..<k`, the comma after the last one excluded.
    private let ends: [Int]

    init(_ table: KeyTableRecord) {
        deckVersion = table.deckVersion
        let slides = table.slides.sorted { $0.n < $1.n }
        slideCount = slides.count
        head = Array("{\"deckVersion\":\(table.deckVersion),\"released\":[".utf8)
        var entries: [UInt8] = []
        var ends = [0]
        for (index, slide) in slides.enumerated() {
            if index > 0 { entries.append(0x2c) }
            entries += JSONValue.object(["n": .int(slide.n), "keyB64": .string(slide.keyB64), "nonceB64": .string(slide.nonceB64)]).canonicalBytes
            ends.append(entries.count)
        }
        self.entries = entries
        self.ends = ends
    }

    /// The body releasing slides `range` (always `0..<k`, clamped to the table).
    func body(releasing range: Range<Int>) -> [UInt8] {
        let count = min(max(range.upperBound, 0), slideCount)
        var body: [UInt8] = []
        body.reserveCapacity(head.count + ends[count] + 3)
        body += head
        body += entries[0..<ends[count]]
        body += [0x5d, 0x7d, 0x0a]  // ]}\n
        return body
    }

    var description: String { "KeyAnswers(deckVersion \(deckVersion), \(slideCount) slides)" }
}
