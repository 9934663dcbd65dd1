import Foundation
import PulseTestSupport
import PulseCore
import PulseCrypto
import PulseHTTPServer
import PulseServer
import PulseServerStorage
import PulseSyncAPI
import PulseSystem
import SyncTestSupport

/// pulse-server in this process with the samples, an admin signed in to its console as a browser is (the
/// cookie, the CSRF token of its pages, its own `Origin`), and phones that enroll and post diag samples:
/// what the tests of the companion-devices, devices, live, report and audit pages need.
final class PagesHarness: @unchecked Sendable {
    let work: TestFolder
    let server: TestSyncServer
    private(set) var cookie = ""
    private(set) var csrf = ""

    static let hostileName = "<img src=x onerror=alert(1)>"
    static let hostileBuild = "</script><script>alert(2)</script>"

    init(_ name: String = #function) throws {
        work = try TestFolder(name + "-work")
        server = try TestSyncServer(package: try SamplePackage.build(in: work.url), name)
        try signIn(try server.staffToken())
    }

    private init(sharing other: PagesHarness) {
        work = other.work
        server = other.server
    }

    /// Another browser on the same server, signed in with `token`.
    static func signedIn(_ other: PagesHarness, token: String) throws -> PagesHarness {
        let harness = PagesHarness(sharing: other)
        try harness.signIn(token)
        return harness
    }

    private func signIn(_ token: String) throws {
        let signIn = try post("/console/sign-in", [("token", token)], withSession: false)
        guard let line = signIn.header("set-cookie"), line.hasPrefix("pulse_console=") else {
            throw TestFailure("sign-in answered \(signIn.status) without the cookie")
        }
        cookie = String(line.dropFirst("pulse_console=".count).prefix { $0 != ";" })
        let page = try get("/console/sessions")
        guard let range = page.text.range(of: #"name="csrf" value=""#) else { return }  // a page without a form (a moderator's)
        csrf = String(page.text[range.upperBound...].prefix { $0 != "\"" })
    }

    var origin: String { "http://127.0.0.1:\(server.port)" }
    var storage: any ServerStorage { server.storage }

    func client() throws -> RawHTTPConnection { try RawHTTPConnection(host: "127.0.0.1", port: Int(server.port)) }

    func get(_ path: String) throws -> RawHTTPResponse {
        try client().request("GET", path, [("Cookie", "pulse_console=\(cookie)")])
    }

    /// A form post from the console's own page: the session cookie, its `Origin`, and (unless `csrf: false`)
    /// the CSRF field.
    func post(_ path: String, _ fields: [(String, String)], csrf withCSRF: Bool = true, withSession: Bool = true) throws -> RawHTTPResponse {
        var headers = [("Content-Type", "application/x-www-form-urlencoded"), ("Origin", origin)]
        if withSession { headers.append(("Cookie", "pulse_console=\(cookie)")) }
        let all = (withSession && withCSRF ? [("csrf", csrf)] : []) + fields
        return try client().request("POST", path, headers, body: Array(Self.encode(all).utf8))
    }

    static func encode(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
    }

    /// A phone enrolled over HTTP for `scope` with `name`.
    func enroll(_ scope: DeviceScope, name: String, platform: String = "ios") throws -> Phone {
        let key = try P256.PrivateKey()
        let body = JSONValue.object([
            "token": .string(try server.deviceCode(scope)), "publicKey": .string(Data(key.publicKey.derRepresentation).base64EncodedString()),
            "platform": .string(platform), "name": .string(name),
        ]).canonicalBytes
        let response = try client().request("POST", "/api/sync/enroll", body: body)
        guard response.status == 200, let id = try JSONValue.parse(Data(response.body))["deviceId"]?.stringValue else {
            throw TestFailure("enroll answered \(response.status): \(response.text)")
        }
        return Phone(id: id, key: key)
    }

    /// `POST /api/sessions/<session>/diag`, signed by `phone`; the status.
    @discardableResult
    func diag(_ phone: Phone, session: String, build: String, rtt: Int, online: Bool = true) throws -> Int {
        let target = "/api/sessions/\(session)/diag"
        let body = JSONValue.object([
            "build": .string(build), "platform": "ios", "online": .bool(online), "rttMs": .int(rtt), "effectiveType": "wifi",
        ]).canonicalBytes
        let now = Int64(Date().timeIntervalSince1970)
        let signature = try DeviceSignature.sign(method: "POST", target: target, body: body, deviceId: phone.id, key: phone.key, at: now)
        return try client().request("POST", target, [("X-Pulse-Device", signature.headerValue), ("Content-Type", "application/json")], body: body).status
    }

    struct Phone {
        let id: String
        let key: P256.PrivateKey
    }
}
