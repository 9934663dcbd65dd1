import PulseMetrics
import PulseObservability

/// pulse-server's `route` label: the route's template, never the raw path (no session id, hash or device
/// id ever becomes a series). Unknown paths are `other`.
public enum ServerRoute: Int, MetricLabel {
    public static let labelName = "route"
    case enroll, certificateKeys, time, manifest, seriesManifest, keys, events, diag, asset, appconfig
    case healthz, livez, readyz, staffAdvance, staffLive, staff, other

    static let values = [
        "/api/sync/enroll", "/api/sync/device-cert-keys", "/api/sync/time", "/api/sync/manifest", "/api/sync/series/:id/manifest",
        "/api/sync/keys", "/api/sync/events", "/api/sessions/:id/diag", "/api/sync/asset/:hash", "/api/sync/appconfig",
        "/healthz", "/livez", "/readyz", "/api/staff/sessions/:id/advance", "/api/staff/sessions/:id/live", "/api/staff/*", "other",
    ]
    public var labelValue: String { Self.values[rawValue] }
    @inlinable public var labelIndex: Int { rawValue }

    /// The route of a request path (the target before `?`), as SyncAPI and StaffAPI route it.
    init(path: ArraySlice<UInt8>) {
        if path.begins(with: "/api/sync/") {
            let rest = path.dropFirst(10)
            if rest.equals("keys") { self = .keys }
            else if rest.equals("manifest") { self = .manifest }
            else if rest.equals("events") { self = .events }
            else if rest.begins(with: "asset/") { self = .asset }
            else if rest.equals("enroll") { self = .enroll }
            else if rest.equals("time") { self = .time }
            else if rest.equals("device-cert-keys") { self = .certificateKeys }
            else if rest.equals("appconfig") { self = .appconfig }
            else if rest.begins(with: "series/"), Self.oneSegment(rest.dropFirst(7), before: "/manifest") { self = .seriesManifest }
            else { self = .other }
        } else if path.begins(with: "/api/staff/") {
            let rest = path.dropFirst(11)
            if rest.begins(with: "sessions/"), Self.oneSegment(rest.dropFirst(9), before: "/advance") { self = .staffAdvance }
            else if rest.begins(with: "sessions/"), Self.oneSegment(rest.dropFirst(9), before: "/live") { self = .staffLive }
            else { self = .staff }
        } else if path.begins(with: "/api/sessions/"), Self.oneSegment(path.dropFirst(14), before: "/diag") {
            self = .diag
        } else if path.equals("/healthz") { self = .healthz }
        else if path.equals("/livez") { self = .livez }
        else if path.equals("/readyz") { self = .readyz }
        else { self = .other }
    }

    /// True when `rest` is one non-empty path segment followed by exactly `suffix`.
    static func oneSegment(_ rest: ArraySlice<UInt8>, before suffix: StaticString) -> Bool {
        suffix.withUTF8Buffer { suffix in
            guard rest.count > suffix.count, rest.suffix(suffix.count).elementsEqual(suffix) else { return false }
            return !rest.dropLast(suffix.count).contains(UInt8(ascii: "/"))
        }
    }
}
