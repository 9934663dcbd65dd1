import Foundation
import PulseCrypto
import PulseSystem
import PulseSystemTesting
import PulseTestSupport
import Testing

/// Issue 23 on the real pulse-origin executable, as wrk measured it: 32 keep-alive clients asking for one blob
/// without a pause (Scripts/lib/keepalive-clients, in a process of its own), the blob sent from memory and, with
/// `--memory-cache 0`, from disk with sendfile. Not one request may go unanswered: a request whose connection
/// ends before its answer is what wrk counts as a read error, and a CDN as a failed fetch.
@Suite(.serialized) struct KeepAliveOriginTests {
    @Test(arguments: ["256MiB", "0"])
    func aSteadyKeepAliveLoadOnABlobLeavesNoRequestUnanswered(memoryCache: String) throws {
        let package = try TestPackage.publicPart()
        let hash = try package.addBlob(try SecureRandom.bytes(114_000))
        let origin = try OriginProcess([
            "--package", package.publicRoot.path, "--access-log", "off", "--max-connections-per-ip", "0", "--threads", "2",
            "--memory-cache", memoryCache,
        ])
        // Stopped here: OriginProcess's reader thread holds it, so its deinit alone would leave the process running.
        defer {
            origin.signal(SIGTERM)
            _ = origin.waitForExit(within: 5)
        }
        let result = try KeepAliveLoad(port: origin.port, connections: 32, seconds: 4, path: "/api/sync/asset/\(hash)").run()
        print("pulse-origin, --memory-cache \(memoryCache), 32 keep-alive clients for 4 s on a 114 KB blob: \(result.answered) answered, "
            + "\(result.drops.count) without an answer \(result.drops.prefix(3))")
        #expect(result.answered > 1_000)
        #expect(result.statuses.keys.sorted() == ["200"], "\(result.statuses)")
        #expect(result.connectErrors == 0)
        #expect(result.drops.isEmpty, "\(result.drops.count) requests without an answer, first: \(result.drops.prefix(3))")
    }
}
