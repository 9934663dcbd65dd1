import Foundation
import PulseConsole
import PulseHTTPServer
import SyncTestSupport
import Testing

@Suite struct PublicURLTests {
    @Test func publicURLsAreHTTPOriginsWithAnOptionalPath() {
        #expect(ConsoleConfiguration.publicURL(parsing: "https://sync.example.org/") == "https://sync.example.org")
        #expect(ConsoleConfiguration.publicURL(parsing: "http://10.0.0.5:8080/pulse") == "http://10.0.0.5:8080/pulse")
        for bad in ["ftp://x", "sync.example.org", "https://", "https://a b", "https://x/?q", "https://x/#f", "https://u@x", "javascript:alert(1)"] {
            #expect(ConsoleConfiguration.publicURL(parsing: bad) == nil, "\(bad)")
        }
    }

    /// With `--public-url`, `Origin` must be its origin, whatever `Host` says.
    @Test func withAPublicURLTheOriginMustBeItsOrigin() throws {
        let harness = try ConsoleHarness()
        var configuration = ConsoleConfiguration()
        configuration.publicURL = "https://sync.example.org"
        let console = Console(sync: harness.server.sync.sync, staff: harness.server.sync.staff, configuration: configuration)
        defer { console.stop() }
        let token = try harness.server.staffToken()
        func signIn(origin: String) -> HTTPResponse {
            console.respond(to: HTTPRequest(
                .post, "/console/sign-in", ["Host": "127.0.0.1:\(harness.port)", "Origin": origin, "Content-Type": "application/x-www-form-urlencoded"],
                body: Array("token=\(token)".utf8)))
        }
        #expect(signIn(origin: harness.origin).status == 403)
        #expect(signIn(origin: "https://sync.example.org").status == 303)
    }
}
