import Foundation
import PulsePostgresTesting
import PulseSystem
import PulseTestSupport
import SyncTestSupport
import Testing
@testable import PulseServer

/// Issue 19 item 2 with the nginx upstream setup of docs/server-operations.md: after SIGTERM an instance answers
/// `/readyz` with 503 at once, keeps serving for `--drain-delay`, then closes its listener and finishes what is in
/// flight, so readers through nginx never see a failure while it goes away. (In the suite of MultiInstanceTests,
/// so one PostgreSQL fleet runs at a time.)
extension MultiInstanceTests {
    @Test func aStoppingInstanceIsNotReadyAtOnceAndNginxReadersNeverFail() throws {
        let database = try PostgresCluster.shared().createDatabase("drain")
        let fleet = try InstanceFleet(database, count: 2, arguments: ["--drain-delay", "2", "--shutdown-timeout", "5"])
        for n in 0..<2 {
            #expect(try fleet.direct(n).request("GET", "/readyz").status == 200)
            #expect(try fleet.direct(n).request("GET", "/livez").text == "ok\n")
        }
        // A keep-alive connection opened before the stop, as a balancer's health checker holds one.
        let checker = try fleet.direct(0)
        #expect(try checker.request("GET", "/readyz").status == 200)

        let stop = Locked(false)
        let answers = Lines()  // one line per request through nginx: its status, or the error
        let readers = DispatchGroup()
        for worker in 0..<4 {
            DispatchQueue.global().async(group: readers) {
                let client = try? fleet.client(source: "127.0.4.\(worker + 1)", timeout: 10)
                while !stop.withLock({ $0 }) {
                    do {
                        answers.add(out: "\(try (client ?? fleet.client(timeout: 10)).request("GET", "/api/sync/time").status)")
                    } catch {
                        answers.add(out: "error: \(error)")
                    }
                    usleep(5_000)
                }
            }
        }
        Thread.sleep(forTimeInterval: 0.5)
        let signalled = Date()
        fleet.servers[0].signal(SIGTERM)
        #expect(fleet.servers[0].waitForLine("draining: /readyz answers 503", within: 2))
        let ready = try fleet.direct(0, timeout: 2).request("GET", "/readyz")
        #expect(ready.status == 503 && ready.text == "draining\n")
        let onHeld = try checker.request("GET", "/readyz")
        #expect(onHeld.status == 503 && onHeld.header("Connection") == "close")
        #expect(try fleet.direct(0, timeout: 2).request("GET", "/livez").status == 200)
        #expect(try fleet.direct(0, timeout: 2).request("GET", "/api/sync/time").status == 200, "a draining instance still serves")
        #expect(try fleet.direct(1).request("GET", "/readyz").status == 200)

        #expect(fleet.servers[0].waitForExit(within: 12) == 0)
        #expect(Date().timeIntervalSince(signalled) >= 2, "the listener closed before --drain-delay was over")
        Thread.sleep(forTimeInterval: 0.5)  // readers go on through nginx after it is gone
        stop.withLock { $0 = true }
        readers.wait()
        let all = answers.out
        #expect(all.count > 100, "too few requests to tell: \(all.count)")
        #expect(all.allSatisfy { $0 == "200" }, "failures through nginx: \(all.filter { $0 != "200" }.prefix(5))")
        #expect(fleet.accessLog(0).contains { $0.contains("/readyz") && $0.contains(" 503 ") && $0.contains("draining") })
    }
}

/// The drain delay on one box: a second stop signal cuts it short, and without `--drain-delay` a stop is as
/// quick as before.
@Suite(.serialized) struct ReadinessDrainTests {
    @Test func aSecondSigtermEndsTheDrainDelay() throws {
        let folder = try TestFolder()
        let server = try ServerProcess(data: folder.url.appendingPathComponent("data").path, ["--drain-delay", "60", "--access-log", "off"])
        server.signal(SIGTERM)
        #expect(server.waitForLine("SIGTERM: draining: /readyz answers 503; serving 60 s more"))
        #expect(try server.client(timeout: 2).request("GET", "/readyz").status == 503)
        #expect(try server.client(timeout: 2).request("GET", "/api/sync/time").status == 200)
        let second = Date()
        server.signal(SIGTERM)
        #expect(server.waitForExit(within: 10) == 0)
        #expect(Date().timeIntervalSince(second) < 5)
        #expect(server.errorLines.contains { $0.contains("SIGTERM again: stopping now") })
    }

    @Test func withoutADrainDelayAStopIsImmediate() throws {
        let folder = try TestFolder()
        let server = try ServerProcess(data: folder.url.appendingPathComponent("data").path, ["--access-log", "off"])
        #expect(try server.client().request("GET", "/readyz").status == 200)
        let signalled = Date()
        server.signal(SIGTERM)
        #expect(server.waitForExit(within: 10) == 0)
        #expect(Date().timeIntervalSince(signalled) < 2)
        #expect(!server.errorLines.contains { $0.contains("draining") })
    }
}
