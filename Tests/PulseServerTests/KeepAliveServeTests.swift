import Foundation
import PulseCrypto
import PulseSystem
import PulseSystemTesting
import PulseTestSupport
import Testing

/// Issue 23 on the real `pulse-server serve`: 32 keep-alive clients without a pause (Scripts/lib/keepalive-clients,
/// in a process of its own) on `/healthz`, and on a signed device route (the keys of a live session: the request
/// signature checked, the answer signed; past the device's rate limit the answers are 429s, answers all the same).
/// Not one request may go unanswered: for a device, a request whose connection ends first never got its answer.
@Suite(.serialized) struct KeepAliveServeTests {
    @Test func aSteadyKeepAliveLoadOnHealthAndASignedRouteLeavesNoRequestUnanswered() throws {
        let folder = try TestFolder()
        let data = folder.url.appendingPathComponent("data").path
        let package = try TestPackage(packageId: TestContent.packageAID)
        try package.addSession("talk", slides: 10)
        try package.commit()
        let imported = CLI.run(["import", "--data", data, package.root.path])
        try #require(imported.code == 0, "\(imported.text)")
        try #require(CLI.run(["admin", "session", "set", "talk", "--state", "live", "--data", data]).code == 0)
        let code = try #require(CLI.run(["admin", "device-code", "create", "--data", data, "--session", "talk"]).out.first)
        let server = try ServerProcess(data: data, ["--access-log", "off", "--threads", "2"])
        let key = try P256.PrivateKey()
        let enrolled = try server.client().request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: code, key: key))
        let device = TestDevice(id: try #require(enrolled.json?["deviceId"]?.stringValue, "\(enrolled.text)"), key: key)
        let target = "/api/sync/keys?session=talk"
        // A signed GET may be sent again within the signature's window (docs/server-routes.md): one header serves the run.
        let signature = try device.header("GET", target, at: Int64(Date().timeIntervalSince1970))
        for (path, headers) in [("/healthz", [String]()), (target, ["X-Pulse-Device: \(signature)"])] {
            let result = try KeepAliveLoad(port: server.port, connections: 32, seconds: 4, path: path, headers: headers).run()
            print("pulse-server, 32 keep-alive clients for 4 s on \(path): \(result.answered) answered \(result.statuses), "
                + "\(result.drops.count) without an answer \(result.drops.prefix(3))")
            #expect(result.answered > 1_000, "\(path)")
            #expect(result.connectErrors == 0, "\(path)")
            #expect(result.drops.isEmpty, "\(path): \(result.drops.count) requests without an answer, first: \(result.drops.prefix(3))")
            if path == target {
                #expect((result.statuses["200"] ?? 0) > 0 && Set(result.statuses.keys).isSubset(of: ["200", "429"]), "\(result.statuses)")
            } else {
                #expect(result.statuses.keys.sorted() == ["200"], "\(result.statuses)")
            }
        }
    }
}
