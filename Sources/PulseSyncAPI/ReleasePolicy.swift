import PulseServerStorage

/// The release decisions as pure functions: the functional core that the HTTP layer gathers inputs
/// for. Nothing here reads a clock, a database or a request; `ReleasePolicyTests` walks every
/// combination against a table written by hand.
public enum ReleasePolicy {
    /// The slides whose keys a request may have, as `0..<k` (empty: none).
    ///
    /// - draft, scheduled, rehearsal: none (a rehearsal frontier is never an input here).
    /// - live: slides 0…frontier, and only from inside the venue when the session is venue-locked.
    /// - ended: the whole deck when the organizer allowed download (venue or not); otherwise as live.
    ///
    /// A frontier past the deck (after a new, shorter deckVersion) releases the whole deck, nothing more;
    /// no frontier (never advanced) releases nothing.
    public static func releasedSlides(
        state: SessionState, frontier: Int?, slideCount: Int, venue: VenueCheck, allowDownload: Bool
    ) -> Range<Int> {
        switch state {
        case .draft, .scheduled, .rehearsal:
            return 0..<0
        case .ended where allowDownload:
            return 0..<slideCount
        case .live, .ended:
            guard venue != .outside, let frontier, frontier >= 0 else { return 0..<0 }
            return 0..<min(frontier + 1, slideCount)
        }
    }

    /// Whether a gated resource shows its full entry.
    ///
    /// Never in draft, scheduled or rehearsal. In live and ended: `releaseAfterSlide` k holds once the
    /// live frontier ≥ k; `releaseAt` holds once the server's clock reaches it; with both, both must
    /// hold; a rule with neither never releases. The venue rule and allowDownload do not apply: they
    /// govern slide keys, and the manifest is one document for every device in scope.
    public static func isReleased(_ rule: GateRule, state: SessionState, frontier: Int?, now: Int64) -> Bool {
        guard state == .live || state == .ended else { return false }
        guard rule.releaseAfterSlide != nil || rule.releaseAt != nil else { return false }
        if let slide = rule.releaseAfterSlide {
            guard let frontier, frontier >= slide else { return false }
        }
        if let moment = rule.releaseAt, now < moment { return false }
        return true
    }

    /// The next moment (Unix seconds) at which `rule` may change its answer by the clock alone, or nil:
    /// lets the HTTP layer schedule a `manifest` event instead of polling.
    public static func nextClockChange(_ rule: GateRule, now: Int64) -> Int64? {
        guard let moment = rule.releaseAt, moment > now else { return nil }
        return moment
    }
}
