import PulseMetrics
import PulseObservability

/// pulse-server's `route` label: the route's template, never the raw path (no session id, hash or device
/// id ever becomes a series). Unknown paths are `other`.
public enum ServerRoute: Int, MetricLabel {
    public static let labelName = "route"
    case enroll, certificateKeys, time, manifest, seriesManifest, keys, events, diag, asset, appconfig
    case healthz, livez, readyz, staffAdvance, staffLive, staff, answerKeys, console, other

    static let values = [
        "/api/sync/enroll", "/api/sync/device-cert-keys", "/api/sync/time", "/api/sync/manifest", "/api/sync/series/:id/manifest",
        "/api/sync/keys", "/api/sync/events", "/api/sessions/:id/diag", "/api/sync/asset/:hash", "/api/sync/appconfig",
        "/healthz", "/livez", "/readyz", "/api/staff/sessions/:id/advance", "/api/staff/sessions/:id/live", "/api/staff/*", "/api/sync/answer-keys", "/console/*", "other",
    ]
    public var labelValue: String { Self.values[rawValue] }
    @inlinable public var labelIndex: Int { rawValue }

    /// The literals the routes are matched against.
    enum Literal {
        static let sync = Array("/api/sync/".utf8), staff = Array("/api/staff/".utf8), sessions = Array("/api/sessions/".utf8)
        static let keys = Array("keys".utf8), manifest = Array("manifest".utf8), events = Array("events".utf8), asset = Array("asset/".utf8)
        static let enroll = Array("enroll".utf8), time = Array("time".utf8), certificateKeys = Array("device-cert-keys".utf8)
        static let answerKeys = Array("answer-keys".utf8)
        static let appconfig = Array("appconfig".utf8), series = Array("series/".utf8), slashManifest = Array("/manifest".utf8)
        static let staffSessions = Array("sessions/".utf8), advance = Array("/advance".utf8), live = Array("/live".utf8), diag = Array("/diag".utf8)
        static let healthz = Array("/healthz".utf8), livez = Array("/livez".utf8), readyz = Array("/readyz".utf8)
        static let console = Array("/console".utf8)
    }

    /// The template of a request target's route (what the JSON access log calls `http.route`).
    public static let template: @Sendable ([UInt8]) -> String = { ServerRoute(target: $0).labelValue }

    /// The route of a request target, as SyncAPI and StaffAPI route it; only the bytes of the literals it
    /// compares are read.
    init(target: [UInt8]) {
        typealias Match = TargetMatch
        if Match.has(target, Literal.sync) {
            let at = Literal.sync.count
            if Match.ends(target, Literal.keys, at: at) { self = .keys }
            else if Match.ends(target, Literal.manifest, at: at) { self = .manifest }
            else if Match.ends(target, Literal.events, at: at) { self = .events }
            else if Match.has(target, Literal.asset, at: at) { self = .asset }
            else if Match.ends(target, Literal.enroll, at: at) { self = .enroll }
            else if Match.ends(target, Literal.time, at: at) { self = .time }
            else if Match.ends(target, Literal.certificateKeys, at: at) { self = .certificateKeys }
            else if Match.ends(target, Literal.answerKeys, at: at) { self = .answerKeys }
            else if Match.ends(target, Literal.appconfig, at: at) { self = .appconfig }
            else if Match.has(target, Literal.series, at: at), Match.segment(target, at: at + Literal.series.count, then: Literal.slashManifest) {
                self = .seriesManifest
            } else { self = .other }
        } else if Match.has(target, Literal.staff) {
            let at = Literal.staff.count + Literal.staffSessions.count
            if Match.has(target, Literal.staffSessions, at: Literal.staff.count), Match.segment(target, at: at, then: Literal.advance) { self = .staffAdvance }
            else if Match.has(target, Literal.staffSessions, at: Literal.staff.count), Match.segment(target, at: at, then: Literal.live) { self = .staffLive }
            else { self = .staff }
        } else if Match.has(target, Literal.sessions), Match.segment(target, at: Literal.sessions.count, then: Literal.diag) {
            self = .diag
        } else if Match.has(target, Literal.console), target.count == Literal.console.count
            || target[Literal.console.count] == UInt8(ascii: "/") || target[Literal.console.count] == UInt8(ascii: "?") {
            self = .console  // the staff console's pages, forms, streams and assets (Console.isConsolePath)
        } else if Match.ends(target, Literal.healthz) { self = .healthz }
        else if Match.ends(target, Literal.livez) { self = .livez }
        else if Match.ends(target, Literal.readyz) { self = .readyz }
        else { self = .other }
    }
}
