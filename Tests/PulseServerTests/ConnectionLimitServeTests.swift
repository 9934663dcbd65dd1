import Foundation
import PulseSystem
import PulseTestSupport
import SyncTestSupport
import Testing

/// Issue 23 on `pulse-server serve` (the real executable): a connection over `--max-connections-per-ip` or
/// `--max-connections` has its request answered 503 with `Retry-After` and `Connection: close`, not closed
/// unanswered; the clients within the limit go on being served.
@Suite(.serialized) struct ConnectionLimitServeTests {
    @Test(arguments: ["--max-connections-per-ip", "--max-connections"])
    func overTheLimitTheRequestIsAnswered503(_ limit: String) throws {
        let folder = try TestFolder()
        let server = try ServerProcess(data: folder.url.appendingPathComponent("data").path, [limit, "2", "--access-log", "off"])
        let held = try (0..<2).map { _ in try server.client() }
        for client in held { #expect(try client.request("GET", "/api/sync/time").status == 200) }
        // Both answered less than a second ago: neither is closed for the newcomer.
        let refused = try server.client(timeout: 3)
        let response = try refused.request("GET", "/api/sync/time")
        #expect(response.status == 503)
        #expect(response.header("Retry-After") == "1")
        #expect(response.header("Connection") == "close")
        #expect(response.text == (limit == "--max-connections" ? "too many connections\n" : "too many connections from this address\n"))
        #expect(refused.closesWithinTimeout())
        if limit == "--max-connections-per-ip" {
            #expect(try server.client(source: "127.0.0.2").request("GET", "/api/sync/time").status == 200)
        }
        for client in held { #expect(try client.request("GET", "/api/sync/time").status == 200) }
    }
}
