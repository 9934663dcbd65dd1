import Foundation
import PulseSystem
import PulseSystemTesting
import PulseTestSupport
import SyncTestSupport
import Testing

/// Issue 19 item 4: `pulse-server serve` under a `Type=notify` unit tells the service manager when it listens,
/// around a SIGHUP reload, and when it stops, through `$NOTIFY_SOCKET`.
@Suite(.serialized) struct ServiceNotifyTests {
    @Test func readyReloadAndStopReachTheServiceManager() throws {
        let socket = try NotifySocket()
        let folder = try TestFolder()
        let server = try ServerProcess(
            data: folder.url.appendingPathComponent("data").path, ["--access-log", "off"], environment: socket.environment)
        let ready = try #require(socket.wait(for: "READY=1"), "no READY=1")
        #expect(ready.contains("STATUS=serving on http://127.0.0.1:\(server.port)"))
        // READY=1 comes once it listens: a unit ordered after this one can connect at once.
        #expect(try server.client().request("GET", "/readyz").status == 200)

        server.signal(SIGHUP)
        let reloading = try #require(socket.wait(for: "RELOADING=1"), "no RELOADING=1 on SIGHUP")
        #expect(reloading.contains { $0.hasPrefix("MONOTONIC_USEC=") && UInt64($0.dropFirst(15)) != nil })
        let again = try #require(socket.wait(for: "READY=1"), "no READY=1 after the reload")
        #expect(again.contains { $0.hasPrefix("STATUS=") && $0.contains("SIGHUP") })

        server.signal(SIGTERM)
        let stopping = try #require(socket.wait(for: "STOPPING=1"), "no STOPPING=1 on SIGTERM")
        #expect(stopping.contains("STATUS=SIGTERM: draining, then stopping"))
        #expect(server.waitForExit(within: 10) == 0)
    }
}
