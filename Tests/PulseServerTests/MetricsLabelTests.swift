import Foundation
@testable import PulseObservability
@testable import PulseServerMetrics
import Testing

/// The labels the metrics derive from an exchange: route templates from targets, reasons and results from
/// the access log's notes, and that every note the routes write today has its reason (a new one would
/// otherwise count as `other` unnoticed).
@Suite struct MetricsLabelTests {
    @Test func targetsBecomeRouteTemplates() {
        let cases: [(String, ServerRoute)] = [
            ("/api/sync/keys?session=keynote", .keys), ("/api/sync/keys", .keys), ("/api/sync/keys/", .other),
            ("/api/sync/manifest?session=a", .manifest), ("/api/sync/events?session=a", .events), ("/api/sync/enroll", .enroll),
            ("/api/sync/time", .time), ("/api/sync/device-cert-keys", .certificateKeys), ("/api/sync/answer-keys", .answerKeys), ("/api/sync/appconfig?org=acme", .appconfig),
            ("/api/sync/asset/" + String(repeating: "a", count: 64), .asset), ("/api/sync/series/devconf/manifest", .seriesManifest),
            ("/api/sync/series//manifest", .other), ("/api/sync/series/a/b/manifest", .other), ("/api/sessions/keynote/diag", .diag),
            ("/api/sessions/diag", .other), ("/api/staff/sessions/keynote/advance", .staffAdvance), ("/api/staff/sessions/keynote/live", .staffLive),
            ("/api/staff/tokens", .staff), ("/api/staff/sessions/a/b/advance", .staff), ("/healthz", .healthz), ("/livez", .livez),
            ("/readyz?x", .readyz), ("/api/sync/keys?x/y", .keys), ("/api/sessions/a?b/diag", .other), ("/api/sync/series/a?/manifest", .other), ("/metrics", .other), ("/", .other), ("", .other), ("/api/sync/keysX", .other), ("/api/syn", .other),
        ]
        for (target, route) in cases {
            #expect(ServerRoute(target: Array(target.utf8)) == route, "\(target)")
        }
        let origin: [(String, OriginRoute)] = [
            ("/api/sync/asset/ab", .asset), ("/api/sync/appconfig?org=x", .appconfig), ("/api/sync/appconfigs", .other), ("/healthz", .healthz),
            ("/livez", .livez), ("/readyz", .readyz), ("/api/sync/keys", .other),
        ]
        for (target, route) in origin {
            #expect(OriginRoute(target: Array(target.utf8)) == route, "\(target)")
        }
        #expect(ServerRoute.values.count == ServerRoute.allCases.count && OriginRoute.values.count == OriginRoute.allCases.count)
        #expect(Set(ServerRoute.values).count == ServerRoute.values.count)
    }

    @Test func statusClasses() {
        #expect([100, 199, 200, 204, 304, 404, 429, 500, 503, 599, 0, 600, -1].map { StatusClass(status: $0).labelValue }
            == ["1xx", "1xx", "2xx", "2xx", "3xx", "4xx", "4xx", "5xx", "5xx", "5xx", "unknown", "unknown", "unknown"])
    }

    @Test func keysNotesGiveTheReleasedCount() {
        #expect("keys:0".releasedCount == 0 && "keys:37".releasedCount == 37)
        #expect("keys:".releasedCount == nil && "keys:3x".releasedCount == nil && "manifest".releasedCount == nil)
        #expect("keys:99999999999999999999".releasedCount == nil)
    }

    /// The notes written in the sync routes' sources, found the way they are written there.
    static func notes(in files: [String]) throws -> Set<String> {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Sources/PulseSyncAPI")
        var found: Set<String> = []
        let pattern = try NSRegularExpression(pattern: #"(?:HTTPResponse\(answers\.\w+, |note: )"([a-z0-9:-]+)""#)
        for file in files {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                found.insert(String(text[Range(match.range(at: 1), in: text)!]))
            }
        }
        return found
    }

    @Test func everyRefusalNoteOfTheSyncRoutesHasItsReason() throws {
        let files = ["SyncAPI.swift", "SyncAPI+Device.swift", "SyncAPI+Enroll.swift", "SyncAPI+Content.swift", "SyncAPI+Events.swift", "SyncAPI+Diag.swift"]
        let notes = try Self.notes(in: files)
        let answers = ["enrolled", "manifest", "series-manifest", "events", "diag", "time", "cert-keys", "health", "ready", "not-ready", "error"]
        let refusals = notes.subtracting(answers)
        #expect(refusals.count >= 15, "\(notes.sorted())")  // the search itself still finds them
        for note in refusals.sorted() {
            #expect(RefusalReason(note: note) != .other, "note \(note) has no refusal reason")
        }
        for note in try Self.notes(in: ["SyncAPI+Enroll.swift"]).sorted() where note != "method" {
            #expect(EnrollmentResult(note: note) != .other, "enroll note \(note) has no result")
        }
        #expect(EnrollmentResult(note: "enrolled:again") == .again && EnrollmentResult(note: "queue-full") == .busy)
    }
}
