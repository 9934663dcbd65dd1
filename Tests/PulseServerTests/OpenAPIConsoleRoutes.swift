import Foundation
import PulseHTTPServer
import Testing
@testable import PulseServer

/// The staff console's half of `OpenAPIDocumentTests`: which (method, path) the console answers.
///
/// The candidates come from Sources/PulseConsole: `/console` itself, the fixed routes of `Console.route`
/// (`case "sign-in" where segments.count == 1`), the assets' path (`/console/assets/{}`), and every
/// `ConsolePage(path: "…")` (a `*` is a `{}`). Each is asked with every method, signed in as an admin (a
/// page answers a signed-out request with the same redirect whatever its path, so only a signed-in request
/// tells a page from no page). Not a route: a 405, or the console's own "no such page" answer, which is
/// read first from a path no page has.
extension OpenAPIDocumentTests {
    static func consoleOperations(_ harness: SyncHarness, token: String) throws -> Set<String> {
        let host = "127.0.0.1:\(harness.port)"
        let signIn = harness.sync.respond(to: HTTPRequest(
            .post, "/console/sign-in", ["Host": host, "Origin": "http://" + host, "Content-Type": "application/x-www-form-urlencoded"],
            body: Array("token=\(token)".utf8)))
        let setCookie = try #require(signIn.header("Set-Cookie"), "the console's sign-in answered \(signIn.status) without a cookie")
        let cookie = String(setCookie.prefix { $0 != ";" })
        func ask(_ method: String, _ target: String) -> HTTPResponse {
            let response = harness.sync.respond(to: HTTPRequest(HTTPMethod(method), target, ["Host": host, "Cookie": cookie]))
            if case let .stream(stream) = response.body { stream.close() }
            return response
        }
        func bytes(_ response: HTTPResponse) -> [UInt8]? {
            if case let .bytes(bytes) = response.body { return bytes }
            return nil
        }
        // The console's "no such page", by method, as it answers a path that no page has.
        var noPage: [String: (Int, [UInt8]?)] = [:]
        for method in methods {
            let answer = ask(method, "/console/no-such-page-\(UUID().uuidString.prefix(8).lowercased())/x/y")
            noPage[method] = (answer.status, bytes(answer))
        }
        let asset = try consoleAssetName(ask("GET", "/console/sign-in"))
        var routed = Set<String>()
        for template in try consoleCandidatePaths() {
            let target = template
                .replacingOccurrences(of: "/console/assets/{}", with: "/console/assets/" + asset)
                .replacingOccurrences(of: "{}", with: "keynote")
            for method in methods {
                let answer = ask(method, target)
                let isNoPage = noPage[method].map { $0.0 == answer.status && $0.1 == bytes(answer) } ?? false
                if answer.status != 405, !isNoPage {
                    routed.insert(method + " " + template)
                }
            }
        }
        return routed
    }

    /// `/console` path templates read from Sources/PulseConsole.
    static func consoleCandidatePaths() throws -> Set<String> {
        var paths: Set<String> = ["/console"]
        let folder = root.appendingPathComponent("Sources/PulseConsole")
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        for file in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: #/ConsolePage\(path: "([a-z0-9*/-]+)"/#) {
                paths.insert("/console/" + match.1.replacingOccurrences(of: "*", with: "{}"))
            }
            for match in text.matches(of: #/case "([a-z-]+)" where segments\.count == 1/#) {
                paths.insert("/console/" + match.1)
            }
            if text.contains(#"path = "/console/assets/\("#) { paths.insert("/console/assets/{}") }
        }
        return paths
    }

    /// The file name of one of the console's assets (`<sha256>.css`), as `page` links it.
    static func consoleAssetName(_ page: HTTPResponse) throws -> String {
        guard case let .bytes(bytes) = page.body, let match = String(decoding: bytes, as: UTF8.self).firstMatch(of: #/\/console\/assets\/([0-9a-f]{64}\.css)/#)
        else { throw OpenAPIMissing("the sign-in page links no stylesheet under /console/assets/") }
        return String(match.1)
    }
}

struct OpenAPIMissing: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
