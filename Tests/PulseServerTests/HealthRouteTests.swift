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
}
