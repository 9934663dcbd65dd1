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

    /// The staff API's and the console's refusals have reasons of their own (they were all `other`): every
    /// status the console answers a refusal with (`console:<status>`, read from Sources/PulseConsole), every
    /// error name of `SyncAnswers.error`, and the staff notes. Only an internal error (500) stays `other`.
    @Test func everyStaffAndConsoleRefusalHasItsReason() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Sources")
        var statuses: Set<String> = []
        let console = root.appendingPathComponent("PulseConsole")
        // Every file, in the module's folders too.
        let files = (FileManager.default.enumerator(atPath: console.path)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".swift") }
        #expect(files.count > 20, "\(console.path) holds the console's sources")
        for file in files {
            let text = try String(contentsOf: console.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: #/(?:message|plain|html|signInPage)\((?:status: )?(4\d\d|5\d\d)|status: (4\d\d|5\d\d)/#) {
                statuses.insert(String(match.1 ?? match.2 ?? ""))
            }
        }
        #expect(statuses.isSuperset(of: ["400", "401", "403", "404", "405", "429", "503"]), "\(statuses.sorted())")
        let answers = try String(contentsOf: root.appendingPathComponent("PulseSyncAPI/SyncAnswers.swift"), encoding: .utf8)
        let errorNames = answers.matches(of: #/case [.\w, ]+: "(\w+)"/#).map { String($0.1) }
        #expect(Set(errorNames).isSuperset(of: ["badRequest", "notFound", "conflict", "unavailable"]), "\(errorNames)")
        let notes = statuses.filter { $0 != "500" }.map { "console:" + $0 } + ["console:409", "console:no-session"]
            + errorNames.filter { $0 != "internal" }.map { "staff:" + $0 } + ["staff:forbidden", "staff:unauthorized", "staff:no-route"]
        for note in notes.sorted() {
            #expect(RefusalReason(note: note, method: "GET") != .other && RefusalReason(note: note, method: "POST") != .other, "\(note) has no reason")
        }
        #expect(RefusalReason(note: "console:403", method: "POST") == .csrf && RefusalReason(note: "console:403", method: "GET") == .forbidden)
        #expect(RefusalReason(note: "staff:forbidden", method: "POST") == .forbidden && RefusalReason(note: "console:500") == .other)
        #expect(ServerRoute(target: Array("/console/sessions/keynote/events".utf8)) == .console && ServerRoute(target: Array("/console".utf8)) == .console)
        #expect(ServerRoute(target: Array("/consoles".utf8)) == .other && ServerRoute(target: Array("/console?x".utf8)) == .console)
    }
}
