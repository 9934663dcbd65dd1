import PulseCore
import PulseServerStorage
import PulseSyncAPI

/// What the clicker shows of a session: the frontier as "Slide N of M", the devices holding that slide's
/// key as "K of D devices have this slide's key", and the next slide "Next slide" asks for. The same values
/// render the page and feed its event stream, so the two never disagree.
struct Clicker: Equatable {
    var state: SessionState
    /// The frontier the state moves: the live one (live, ended), the rehearsal one in rehearsal; 0-based.
    var frontier: Int?
    var slides: Int
    var holding: Int
    var devices: Int

    init(_ session: SessionRecord, holders: KeyHolders) {
        state = session.state
        frontier = session.state == .rehearsal ? session.rehearsalMaxShown : session.maxShown
        slides = session.slideCount
        // Rehearsal releases nothing: no device holds a key for its frontier.
        let counted = holders.count(session: session.id, deckVersion: session.deckVersion, slide: session.state == .rehearsal ? nil : session.maxShown)
        holding = counted.holding
        devices = counted.devices
    }

    /// "Slide N of M" (N counts from 1; 0 before the first advance).
    var slideText: String { "Slide \(frontier.map { $0 + 1 } ?? 0) of \(slides)" }

    var keysText: String { "\(holding) of \(devices) devices have this slide's key" }

    var stateText: String {
        switch state {
        case .draft: "Draft"
        case .scheduled: "Scheduled"
        case .rehearsal: "Rehearsal (releases nothing)"
        case .live: "Live"
        case .ended: "Ended"
        }
    }

    /// Why "Next slide" is off, or nothing.
    var hint: String {
        if state != .live && state != .rehearsal { return "Next slide works once the session is live (or in rehearsal, which releases nothing)." }
        return next >= slides ? "This is the last slide." : ""
    }

    /// The slide "Next slide" advances to (0-based).
    var next: Int { (frontier ?? -1) + 1 }

    /// Advances apply in rehearsal and live, up to the last slide.
    var canAdvance: Bool { (state == .live || state == .rehearsal) && next < slides }

    /// The `clicker` event's data: the text of each live element by id, and what the script needs.
    var event: JSONValue {
        [
            "text": ["slide-text": .string(slideText), "keys-text": .string(keysText), "state-text": .string(stateText), "advance-hint": .string(hint)],
            "next": .int(next), "canAdvance": .bool(canAdvance),
        ]
    }
}
