import Foundation
import PulseTestSupport
import PulseCrypto
import PulseHTTPServer
import PulseServer
import PulseServerStorage
import PulseSyncAPI
import PulseSystem
import SyncTestSupport

/// pulse-server in this process with the samples imported, and the requests a browser would make to its
/// console: the cookie it holds, the `Origin` it sends, the CSRF token it read from a page.
final class ConsoleHarness: @unchecked Sendable {
    let work: TestFolder
    let server: TestSyncServer

    init(
        _ name: String = #function, configure: (inout SyncConfiguration) -> Void = { _ in },
        serverConfigure: (inout HTTPServer.Configuration) -> Void = { _ in }
    ) throws {
        work = try TestFolder(name + "-work")
        let package = try SamplePackage.build(in: work.url)
        server = try TestSyncServer(package: package, name, configure: configure, serverConfigure: serverConfigure)
    }

    var port: UInt16 { server.port }
    var origin: String { "http://127.0.0.1:\(port)" }
    var storage: any ServerStorage { server.storage }

    func client(source: String? = nil) throws -> RawHTTPConnection {
        try RawHTTPConnection(host: "127.0.0.1", port: Int(port), source: source)
    }

    func get(_ path: String, cookie: String? = nil, headers: [(String, String)] = []) throws -> RawHTTPResponse {
        var all = headers
        if let cookie { all.append(("Cookie", "pulse_console=\(cookie)")) }
        return try client().request("GET", path, all)
    }

    /// A form post as a browser sends it from the console's own page (unless `origin` says otherwise).
    func post(
        _ path: String, _ fields: [(String, String)], cookie: String? = nil, origin: String?? = .some(nil), headers: [(String, String)] = [],
        source: String? = nil
    ) throws -> RawHTTPResponse {
        var all: [(String, String)] = [("Content-Type", "application/x-www-form-urlencoded")] + headers
        switch origin {
        case .none: break
        case .some(.none): all.append(("Origin", self.origin))
        case let .some(.some(value)): all.append(("Origin", value))
        }
        if let cookie { all.append(("Cookie", "pulse_console=\(cookie)")) }
        return try client(source: source).request("POST", path, all, body: Array(Self.encode(fields).utf8))
    }

    /// Signs in with `token`; the session cookie's value, or nil when refused.
    func signIn(_ token: String, source: String? = nil) throws -> (cookie: String?, response: RawHTTPResponse) {
        let response = try post("/console/sign-in", [("token", token)], source: source)
        return (Self.cookie(response), response)
    }

    /// A signed-in admin: the cookie and the CSRF token of their pages.
    func admin() throws -> (cookie: String, csrf: String) {
        let token = try server.staffToken()
        guard let cookie = try signIn(token).cookie else { throw TestFailure("sign-in refused") }
        let page = try get("/console/sessions", cookie: cookie)
        guard let csrf = Self.csrf(page.text) else { throw TestFailure("no CSRF token on the sessions page") }
        return (cookie, csrf)
    }

    static func cookie(_ response: RawHTTPResponse) -> String? {
        guard let line = response.header("set-cookie"), line.hasPrefix("pulse_console=") else { return nil }
        let value = line.dropFirst("pulse_console=".count).prefix { $0 != ";" }
        return value.isEmpty ? nil : String(value)
    }

    /// The value of the first hidden `csrf` field of a page.
    static func csrf(_ html: String) -> String? {
        guard let range = html.range(of: #"name="csrf" value=""#) else { return nil }
        return String(html[range.upperBound...].prefix { $0 != "\"" })
    }

    static func encode(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
    }
}

extension RawHTTPResponse {
    /// Every value of header `name`.
    func headers(_ name: String) -> [String] { headers.filter { $0.name == name.lowercased() }.map(\.value) }
}
