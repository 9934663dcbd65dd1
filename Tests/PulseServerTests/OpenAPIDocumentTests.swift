import Foundation
import PulseHTTPServer
import PulseOrigin
import PulseSystem
import PulseTestSupport
import Testing
@testable import PulseServer

/// docs/openapi.yaml is valid OpenAPI (openapi-spec-validator, installed by Scripts/bootstrap into
/// .build/tools/openapi-venv) and describes exactly the routes the servers answer: every (method, path)
/// the document lists reaches a route of pulse-server (with `--public`), and every (method, path) the
/// routers answer is in the document. The routers are asked, in process: the candidate paths come from
/// the route constants and staff route cases in Sources/, and each is sent with every method; an answer
/// whose access-log note says "no such route" or "not this method" (or a 405) is not a route. The staff
/// console's routes (`/console…`) are asked signed in (OpenAPIConsoleRoutes.swift).
@Suite struct OpenAPIDocumentTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardizedFileURL
    static let document = root.appendingPathComponent("docs/openapi.yaml")
    static let validator = root.appendingPathComponent(".build/tools/openapi-venv/bin/openapi-spec-validator")

    @Test func theDocumentIsValidOpenAPI() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.validator.path),
            "\(Self.validator.path) is missing: run Scripts/bootstrap (it installs openapi-spec-validator)")
        let (status, output) = try Self.run(Self.validator.path, [Self.document.path])
        #expect(status == 0, "openapi-spec-validator: \(output)")
        #expect(output.contains("OK"))
        // The validator catches what this test relies on it for: a reference to nothing is refused.
        let folder = try TestFolder("openapi-broken")
        let broken = folder.url.appendingPathComponent("openapi.yaml")
        let text = try String(contentsOf: Self.document, encoding: .utf8)
        try text.replacingOccurrences(of: "'#/components/schemas/Keys'", with: "'#/components/schemas/NoSuchSchema'")
            .write(to: broken, atomically: true, encoding: .utf8)
        let (brokenStatus, _) = try Self.run(Self.validator.path, [broken.path])
        #expect(brokenStatus != 0, "openapi-spec-validator accepted a document with a dangling $ref")
    }

    @Test func everyRouteIsDocumentedAndEveryDocumentedRouteExists() throws {
        let documented = try Self.documentedOperations()
        #expect(documented.count > 30, "read only \(documented.count) operations from docs/openapi.yaml")
        let known = try Self.routedOperations()
        #expect(known.count > 30, "the routers answered only \(known.count) operations")
        for missing in known.subtracting(documented).sorted() {
            Issue.record("the server answers \(missing), which docs/openapi.yaml does not describe")
        }
        for extra in documented.subtracting(known).sorted() {
            Issue.record("docs/openapi.yaml describes \(extra), which no router answers")
        }
    }

    /// The check itself: a route found in the source but missing from the document is reported, the console's
    /// too; a method a console route does not take, or a page that does not exist, is no route.
    @Test func aRouteMissingFromTheDocumentIsFound() throws {
        let documented = try Self.documentedOperations()
        let dropped: Set = ["GET /api/sync/keys", "GET /console/sessions/{}/live/events", "POST /console/sessions/{}/advance"]
        #expect(dropped.isSubset(of: documented))
        let known = try Self.routedOperations()
        #expect(known.contains("GET /api/sync/keys") && known.contains("PATCH /api/staff/sessions/{}"))
        #expect(known.contains("GET /console/sessions/{}/events") && known.contains("GET /console/assets/{}"))
        #expect(known.subtracting(documented.subtracting(dropped)) == dropped)
        #expect(known.isDisjoint(with: ["GET /console/sign-out", "POST /console/present", "PUT /console/sessions/{}", "GET /console/sessions/{}/advance"]))
        #expect(!known.contains { $0.hasPrefix("GET /console/no-such") })
    }

    /// What the document says and JSON Schema cannot: an `integer` field takes a JSON integer literal only.
    /// (Schemathesis's positive_data_acceptance sent `"rttMs": 262145.0` and `"maxShown": 152.0`, integers to
    /// JSON Schema, and got 400: the server's rule, now written in docs/openapi.yaml.)
    @Test func integerFieldsTakeIntegerLiteralsOnly() throws {
        let harness = try SyncHarness()
        try harness.seed(["keynote"], slides: 200, state: .live)
        let phone = try harness.device(for: .session("keynote"))
        let client = try harness.client()
        func diag(_ rtt: String) throws -> RawHTTPResponse {
            let body = Array(#"{"build":"2.4.1","online":true,"platform":"ios","rttMs":\#(rtt)}"#.utf8)
            return try client.signed("POST", "/api/sessions/keynote/diag", by: phone, at: harness.clock.seconds, body: body)
        }
        for written in ["262145.0", "2.62145e5"] {
            let refused = try diag(written)
            #expect(refused.status == 400 && refused.json == ["error": "badRequest", "field": "rttMs"], "rttMs \(written): \(refused.text)")
        }
        #expect(try diag("262145").status == 204)
        let auth = [("Authorization", "Bearer " + (try harness.staffToken()))]
        let advance = "/api/staff/sessions/keynote/advance"
        let refused = try client.request("POST", advance, auth, body: Array(#"{"maxShown":152.0}"#.utf8))
        #expect(refused.status == 400 && refused.json?["error"] == "badRequest", "\(refused.text)")
        #expect(try client.request("POST", advance, auth, body: Array(#"{"maxShown":152}"#.utf8)).status == 200)
    }

    // MARK: The document

    /// `METHOD /path` for each operation, path parameters written `{}`. The document keeps paths at two
    /// spaces under `paths:` and their methods at four.
    static func documentedOperations() throws -> Set<String> {
        let lines = try String(contentsOf: document, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        var operations = Set<String>()
        var inPaths = false
        var path: String?
        for line in lines {
            if !line.hasPrefix(" ") && !line.isEmpty && !line.hasPrefix("#") { inPaths = line == "paths:" ; path = nil; continue }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                path = normalized(String(line.dropFirst(2).dropLast()))
            } else if let path, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                let method = line.trimmingCharacters(in: .whitespaces).dropLast()
                if methods.contains(method.uppercased()) { operations.insert(method.uppercased() + " " + path) }
            }
        }
        return operations
    }

    static let methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    static func normalized(_ path: String) -> String {
        path.replacingOccurrences(of: #"\{[^}]*\}"#, with: "{}", options: .regularExpression)
    }

    // MARK: The routers

    /// Every (method, path template) the routers of pulse-server (with `--public`, and its console) and pulse-origin answer.
    static func routedOperations() throws -> Set<String> {
        let publicPart = try TestFolder("openapi-public")
        let originOnly = try origin(in: publicPart)
        let harness = try SyncHarness("openapi-routes", origin: originOnly)
        try harness.seed(["keynote"], series: "conf")
        let token = try harness.staffToken()
        var routed = Set<String>()
        for template in try candidatePaths() {
            let target = template
                .replacingOccurrences(of: "/api/sync/asset/{}", with: "/api/sync/asset/" + String(repeating: "ab", count: 32))
                .replacingOccurrences(of: "/api/sync/series/{}", with: "/api/sync/series/conf")
                .replacingOccurrences(of: "{}", with: "keynote")
            for method in methods {
                var headers = ["Authorization": "Bearer " + token]
                if method == "OPTIONS" { headers["Origin"] = "https://app.example"; headers["Access-Control-Request-Method"] = "GET" }
                let request = HTTPRequest(HTTPMethod(method), target, headers)
                if isRoute(harness.sync.respond(to: request)) || isRoute(originOnly.respond(to: request)) {
                    routed.insert(method + " " + template)
                }
            }
        }
        return routed.union(try consoleOperations(harness, token: token))
    }

    /// The notes (and status) of the answers that mean "no such route" or "not this method".
    static func isRoute(_ response: HTTPResponse) -> Bool {
        let notRoutes: Set<String> = ["no:route", "no:method", "method", "staff:no-route", "no-route", "no:no-origin"]
        return response.status != 405 && !notRoutes.contains(response.note)
    }

    /// The origin's responder on an empty public part (`pulse-public/1`: an index, no blobs, no app configs).
    static func origin(in folder: TestFolder) throws -> Origin {
        try FileManager.default.createDirectory(at: folder.url.appendingPathComponent("assets"), withIntermediateDirectories: true)
        try Data(#"{"format":"pulse-public/1","packageId":"0123456789abcdef0123456789abcdef","appconfig":{},"history":{}}"#.utf8)
            .write(to: folder.url.appendingPathComponent("index.json"))
        return try Origin(configuration: OriginConfiguration(packageRoot: folder.url), accessLog: nil, alarm: { _ in })
    }

    /// Path templates read from the routers' source: every `Array("/api/…".utf8)` and health-probe (`/healthz`, `/livez`, `/readyz`) route
    /// constant (exact paths; a prefix ending in `/` takes an id), the `middle(path, Self.prefix, Self.suffix)`
    /// pairs (`/prefix{}suffix`), and the staff router's `("name", count) where parts[i] == "word"` cases.
    static func candidatePaths() throws -> Set<String> {
        var constants: [String: String] = [:]
        var staffCases: [(String, Int, Int?, String?)] = []
        var middles: [(String, String)] = []
        let sources = root.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        for file in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: #/static let (\w+) = Array\("(/[^"]*)"\.utf8\)/#) {
                constants[String(match.1)] = String(match.2)
            }
            for match in text.matches(of: #/middle\(path, Self\.(\w+), Self\.(\w+)\)/#) {
                middles.append((String(match.1), String(match.2)))
            }
            if text.contains("func staffRoute(") {
                for match in text.matches(of: #/\("([a-z-]+)", (\d)\)(?: where parts\[(\d)\] == "([a-z-]+)")?/#) {
                    staffCases.append((String(match.1), Int(match.2) ?? 0, match.3.flatMap { Int($0) }, match.4.map(String.init)))
                }
            }
        }
        var paths = Set<String>()
        let inMiddles = Set(middles.flatMap { [$0.0, $0.1] })
        for (name, value) in constants where !inMiddles.contains(name) && (value.hasPrefix("/api/") || ["/healthz", "/livez", "/readyz"].contains(value)) {
            if value == "/api/staff/" { continue }
            paths.insert(value.hasSuffix("/") ? value + "{}" : value)
        }
        for (prefix, suffix) in middles {
            if let prefix = constants[prefix], let suffix = constants[suffix] { paths.insert(prefix + "{}" + suffix) }
        }
        for (name, count, index, word) in staffCases {
            var parts = [name] + Array(repeating: "{}", count: count - 1)
            if let index, let word, index < count { parts[index] = word }
            paths.insert("/api/staff/" + parts.joined(separator: "/"))
        }
        return paths
    }

    static func run(_ executable: String, _ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
