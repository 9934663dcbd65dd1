import PulseCore
import PulseServerStorage

/// What an operator may tune about the console; the defaults are the decisions of docs/console.md.
public struct ConsoleConfiguration: Sendable {
    /// The server's public URL (`serve --public-url`, e.g. `https://sync.example.org`): its origin is the one
    /// `Origin` must match, and the enrollment links are made from it. Nil: the request's `Host` (with
    /// `https` when the request came through a trusted proxy that says so).
    public var publicURL: String?
    /// A console session ends after this long without a request…
    public var idleSeconds: Double = 30 * 60
    /// …and this long after sign-in in any case.
    public var maxAgeSeconds: Double = 12 * 3600
    /// Console sessions held at most (the oldest goes beyond).
    public var maxSessions = 10_000
    /// Console event streams (clickers and live views, each a connection) open at once per console session; a
    /// newer one closes the oldest (docs/console.md).
    public var maxStreamsPerSession = 8
    /// …and per staff token, across all the console sessions signed in with it.
    public var maxStreamsPerToken = 16
    /// Sign-in attempts per client address: a burst of 10, then one every 6 seconds.
    public var signInLimit = RateLimit(rate: 1.0 / 6, burst: 10)

    public init() {}

    /// `text` as a public URL (`--public-url`): `http(s)://host[:port]` with an optional plain path, without a
    /// trailing `/`; nil when it is not one. The enrollment link's own check (`EnrollmentLink.server`), so
    /// every accepted URL can be the server of a link: no query, fragment, user info, spaces or odd path.
    public static func publicURL(parsing text: String) -> String? {
        try? EnrollmentLink.server(text)
    }
}
