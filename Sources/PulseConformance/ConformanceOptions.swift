import Foundation

/// What the suite runs against and with.
public struct ConformanceOptions: Sendable {
    /// The sync server's base URL.
    public var server: URL
    /// Where assets and app configs are served (a CDN, pulse-origin); the server when nil.
    public var assets: URL?
    /// A staff token: the suite mints its own codes and tokens, revokes a device, and drives the session's state.
    public var staffToken: String?
    /// A device code and a registration token to enroll with when there is no staff token.
    public var deviceCode: String?
    public var registrationToken: String?
    /// The session to test (and, with a staff token, to drive); otherwise one is chosen.
    public var session: String?
    /// An organisation slug for the app config rule.
    public var org: String?
    /// Only these rules (ids); all when empty.
    public var only: Set<String> = []
    /// Enrollment attempts the rate-limit rule makes at most, and signed keys calls.
    public var enrollProbe = 200
    public var deviceProbe = 60

    public init(server: URL) {
        self.server = server
    }
}
