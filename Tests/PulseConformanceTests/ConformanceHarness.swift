import Foundation
import PulseConformance
import PulseHTTPServer
import PulseServer
import PulseServerStorage
import PulseSyncAPI
import PulseTestSupport
import SyncTestSupport
import Testing

/// The suite against pulse-server in this process (the samples imported), broken or not.
struct ConformanceHarness {
    let work: TestFolder
    let package: SamplePackage
    let server: TestSyncServer

    init(
        _ name: String = #function, configure: (inout SyncConfiguration) -> Void = { _ in },
        wrap: (SyncServer, any ServerStorage) -> any HTTPResponder = { sync, _ in sync }
    ) throws {
        work = try TestFolder(name)
        package = try SamplePackage.build(in: work.url)
        server = try TestSyncServer(package: package, name, configure: configure, wrap: wrap)
    }

    /// Runs the suite with a staff token (or, without, a device code and a registration token).
    func run(only: Set<String> = [], staff: Bool = true) throws -> [RuleResult] {
        var options = ConformanceOptions(server: server.url)
        options.org = "acme"
        options.only = only
        if staff {
            options.staffToken = try server.staffToken()
        } else {
            options.deviceCode = try server.deviceCode(.session("keynote"))
            options.registrationToken = try server.registrationToken(series: "devconf-2026")
        }
        return try ConformanceRun(options: options).run()
    }
}

extension Array where Element == RuleResult {
    func verdict(_ id: String) -> Verdict? { first { $0.rule.id == id }?.verdict }
    var failed: [String] { filter { $0.verdict == .fail }.map(\.rule.id) }
    var skipped: [String] { filter { $0.verdict == .skip }.map(\.rule.id) }
    /// Every rule's verdict and evidence, for a failure message.
    var report: String { ConformanceReport.table(self).joined(separator: "\n") }
}
