import PulseCore
import PulseHTTPServer
import PulseServerStorage
import Synchronization

/// The answers of `GET /api/sync/keys` for one key table, prepared once: every slide's entry
/// `{"keyB64":…,"n":…,"nonceB64":…}` written back to back with commas, and where each ends, so the
/// body for slides `0..<k` is one copy of a prefix between a fixed head and tail.
///
///     {"deckVersion":3,"released":[{"keyB64":"…","n":0,"nonceB64":"…"},…]}
///
/// The release decision is not made here: `ReleasePolicy.releasedSlides` gives the range, this only
/// writes it. Each answer is prepared once as a libmicrohttpd response, on first use, and shared by every
/// request released as far (during an event: every device). Never printed (a key in a log line is a leak).
struct KeyAnswers: Sendable, CustomStringConvertible {
    let deckVersion: Int
    let slideCount: Int
    private let head: [UInt8]
    private let entries: [UInt8]
    /// `ends[k]`: the length of the entries of slides `0..<k`, the comma after the last one excluded.
    private let ends: [Int]
    /// The answers made so far, by released count (`response(releasing:)`).
    private let prepared = Prepared()

    private final class Prepared: Sendable {
        let responses = Mutex<[Int: SharedResponse]>([:])
    }

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

    /// The answer releasing slides `range` (always `0..<k`, clamped to the table): 200, JSON, no-store.
    func response(releasing range: Range<Int>) -> SharedResponse {
        let count = min(max(range.upperBound, 0), slideCount)
        if let ready = prepared.responses.withLock({ $0[count] }) { return ready }
        let response = SharedResponse(HTTPResponse(status: 200, headers: [SyncAPI.jsonType, SyncAPI.noStore], body: .bytes(body(count))))
        return prepared.responses.withLock { responses in
            if let other = responses[count] { return other }  // made meanwhile by another thread: one copy is kept
            responses[count] = response
            return response
        }
    }

    /// The body releasing slides `0..<count`.
    private func body(_ count: Int) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(head.count + ends[count] + 3)
        body += head
        body += entries[0..<ends[count]]
        body += [0x5d, 0x7d, 0x0a]  // ]}\n
        return body
    }

    var description: String { "KeyAnswers(deckVersion \(deckVersion), \(slideCount) slides)" }
}
