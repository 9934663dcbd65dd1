// What a session and a gated resource hold for `ReleasePolicy` (in PulseSyncAPI) to decide on.

/// Whether the request comes from a session's venue.
public enum VenueCheck: Sendable, CaseIterable {
    /// The session has no venue networks: the venue rule does not apply.
    case unlocked
    /// Venue-locked, and the request's client address is in one of the venue networks.
    case inside
    /// Venue-locked, and the request comes from elsewhere.
    case outside
}

/// A timeline-gated resource's release rule (docs/server.md, "Gated resources").
public struct GateRule: Equatable, Sendable {
    /// Released once the live frontier reaches this slide (0-based).
    public var releaseAfterSlide: Int?
    /// Released from this moment on, by the server's clock (Unix seconds).
    public var releaseAt: Int64?

    public init(releaseAfterSlide: Int? = nil, releaseAt: Int64? = nil) {
        self.releaseAfterSlide = releaseAfterSlide
        self.releaseAt = releaseAt
    }
}
