import Foundation
import Testing
@testable import PulseServer

/// `/healthz` takes GET and HEAD, like the other public read routes and pulse-origin's `/healthz`; any other
/// method is 405 with `Allow: GET, HEAD`. (Found by OpenAPIDocumentTests: POST, PUT, PATCH, DELETE and OPTIONS
/// answered 200 `ok`, which docs/openapi.yaml and docs/server.md never said.)
@Suite struct HealthRouteTests {
    @Test func healthTakesGetAndHeadOnly() throws {
        let harness = try SyncHarness()
        let get = try harness.client().request("GET", "/healthz")
        #expect(get.status == 200 && get.text == "ok\n")
        #expect(try harness.client().request("HEAD", "/healthz").status == 200)
        for method in ["POST", "PUT", "PATCH", "DELETE", "OPTIONS"] {
            let answer = try harness.client().request(method, "/healthz")
            #expect(answer.status == 405, "\(method) /healthz answered \(answer.status)")
            #expect(answer.header("Allow") == "GET, HEAD")
            #expect(answer.json == ["error": "methodNotAllowed"])
        }
    }

    /// Issue 19 item 2: `/livez` is the process, `/readyz` the process able to serve and not stopping. From the
    /// moment a stop begins `/readyz` is 503 with `Connection: close` while everything else is still served.
    @Test func readinessEndsTheMomentAStopBegins() throws {
        let harness = try SyncHarness()
        for path in ["/livez", "/readyz"] {
            let get = try harness.client().request("GET", path)
            #expect(get.status == 200 && get.text == "ok\n" && get.header("Cache-Control") == "no-store", "\(path)")
            #expect(try harness.client().request("HEAD", path).status == 200)
            #expect(try harness.client().request("GET", path + "?verbose=1").status == 200, "a query does not change the route")
            for method in ["POST", "DELETE", "OPTIONS"] {
                let answer = try harness.client().request(method, path)
                #expect(answer.status == 405 && answer.header("Allow") == "GET, HEAD", "\(method) \(path): \(answer.status)")
            }
        }
        let held = try harness.client()
        #expect(try held.request("GET", "/readyz").status == 200)

        harness.sync.sync.readiness.beginDraining()
        let draining = try held.request("GET", "/readyz")
        #expect(draining.status == 503 && draining.text == "draining\n")
        #expect(draining.header("Connection") == "close")
        #expect(try harness.client().request("GET", "/readyz").status == 503)
        #expect(try harness.client().request("GET", "/livez").status == 200)
        #expect(try harness.client().request("GET", "/healthz").status == 200, "/healthz keeps its meaning: storage")
        #expect(try harness.client().request("GET", "/api/sync/time").status == 200, "a draining server still serves")
    }
}
