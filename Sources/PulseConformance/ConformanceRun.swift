import Foundation
import PulseCore
import PulseCrypto
import PulseDevice

/// One run of the suite against one server: sets up what the rules need (devices enrolled with its own
/// codes and tokens, minted through the staff API when it has a token), then checks every selected rule
/// and records PASS, FAIL or SKIP with the evidence. Rules that drive the session's state run last but two
/// (the rate limits, which leave a device and the suite's address throttled, come last).
public final class ConformanceRun {
    let options: ConformanceOptions
    let wire: any Wire
    let assets: any Wire
    let transport: URLSessionTransport
    let log: (String) -> Void
    var results: [String: RuleResult] = [:]

    // What the setup found or made.
    /// Server clock minus local clock, in seconds.
    var offset = 0.0
    var staff: StaffClient?
    /// The session the rules read (and, with staff, drive), another one, the series of the first.
    var session: String?
    var otherSession: String?
    var series: String?
    /// A device whose scope covers `session`; two series devices; one revoked; one for the rate limit.
    var device: ConformanceDevice?
    var seriesDevices: [ConformanceDevice] = []
    var revoked: ConformanceDevice?
    var limited: ConformanceDevice?
    /// Why something the rules need is missing.
    var missing: [String: String] = [:]
    /// Tokens for the enrollment rules.
    var singleUseCode: String?
    var badKeyToken: String?
    var registrationToken: String?
    /// Answers kept for comparisons: a first enrollment's 404, and the session manifest as the device saw it.
    var unknownToken404: WireResponse?
    var sessionManifest: (response: WireResponse, json: JSONValue)?
    /// The session as staff saw it before the suite drove it (put back at the end).
    var originalSession: JSONValue?

    /// - Parameter log: a line per rule as it finishes (the CLI's progress on standard error).
    public init(options: ConformanceOptions, log: @escaping (String) -> Void = { _ in }) throws {
        self.options = options
        self.log = log
        transport = URLSessionTransport(timeout: 20, connectionsPerHost: 4)
        wire = try Self.wire(options.server, transport: transport)
        assets = try Self.wire(options.assets ?? options.server, transport: transport)
    }

    deinit { transport.invalidate() }

    static func wire(_ url: URL, transport: URLSessionTransport) throws -> any Wire {
        url.scheme?.lowercased() == "https" ? SessionWire(url: url, transport: transport) : try RawWire(url: url)
    }

    /// Runs every selected rule; the results in catalog order.
    /// - Throws: when the run cannot start at all: the server does not answer, or the staff token is refused.
    public func run() throws -> [RuleResult] {
        try setUp()
        enrollRules()
        signatureRules()
        contentRules()
        timeAndDiagRules()
        answerRules()
        keyRules()
        rateLimitRules()
        restore()
        return RuleCatalog.all.compactMap { results[$0.id] }
    }

    // MARK: Running one rule

    func isSelected(_ id: String) -> Bool { options.only.isEmpty || options.only.contains(id) }

    /// Runs `body` as rule `id` (when selected): it passes unless it throws `Broken` (or anything else: a
    /// failure) or `Skip`.
    func rule(_ id: String, _ body: (Evidence) throws -> Void) {
        guard isSelected(id), let rule = RuleCatalog.rule(id) else { return }
        let evidence = Evidence()
        let verdict: Verdict
        var lines: [String]
        do {
            try body(evidence)
            verdict = .pass
            lines = evidence.lines
        } catch let skip as Skip {
            verdict = .skip
            lines = [skip.reason] + evidence.lines
        } catch let broken as Broken {
            verdict = .fail
            lines = evidence.lines + ["✗ " + broken.reason]
        } catch {
            verdict = .fail
            lines = evidence.lines + ["✗ \(error)"]
        }
        results[id] = RuleResult(rule: rule, verdict: verdict, evidence: lines)
        log("\(verdict.rawValue) \(id)")
    }

    /// `value`, or a skip naming what is missing.
    func need<T>(_ value: T?, _ what: String) throws -> T {
        guard let value else { throw Skip("needs \(what)" + (missing[what].map { ": \($0)" } ?? "")) }
        return value
    }

    /// The server's clock now, as the suite estimates it.
    var serverNow: Int64 { Int64((Date().timeIntervalSince1970 + offset).rounded(.down)) }

    // MARK: Requests

    /// A request signed by `device` at the server's time (or `at`), sent once more after a 429's Retry-After
    /// (up to three times): rules other than the rate limits must not trip over it.
    func signed(
        _ method: String, _ target: String, by device: ConformanceDevice, body: [UInt8]? = nil, headers: [(name: String, value: String)] = [],
        at timestamp: Int64? = nil
    ) throws -> WireResponse {
        var attempt = 0
        while true {
            let header = try device.header(method, wire.prefix + target, body: body ?? [], at: timestamp ?? serverNow)
            let extra: [(name: String, value: String)] = body == nil ? [] : [("Content-Type", "application/json")]
            let response = try wire.send(method, target, headers: headers + extra + [header], body: body)
            guard response.status == 429, attempt < 3 else { return response }
            attempt += 1
            Thread.sleep(forTimeInterval: min(5, max(0.2, Double(response.header("retry-after") ?? "1") ?? 1)))
        }
    }

    /// Sends exactly these bytes, and again after a 429's Retry-After (up to three times): a 429 comes before
    /// any effect (a replay is recorded only after it), so the same bytes stay the same test.
    func send(_ method: String, _ target: String, headers: [(name: String, value: String)] = [], body: [UInt8]? = nil) throws -> WireResponse {
        var attempt = 0
        while true {
            let response = try wire.send(method, target, headers: headers, body: body)
            guard response.status == 429, attempt < 3 else { return response }
            attempt += 1
            Thread.sleep(forTimeInterval: min(5, max(0.2, Double(response.header("retry-after") ?? "1") ?? 1)))
        }
    }

    /// POST /api/sync/enroll with `token` and a new key: the device when it answered 200, and the answer.
    func enroll(_ token: String, publicKey: String? = nil) throws -> (device: ConformanceDevice?, response: WireResponse) {
        let key = try P256.PrivateKey()
        let body = ConformanceDevice.enrollBody(token: token, key: key, publicKey: publicKey)
        var response = try wire.send("POST", "/api/sync/enroll", headers: [("Content-Type", "application/json")], body: body)
        var attempt = 1
        // The enrollment rate limit (per address) may still be spent by an earlier run: wait it out.
        while response.status == 429 && attempt < 12 {
            Thread.sleep(forTimeInterval: min(5, max(0.2, Double(response.header("retry-after") ?? "1") ?? 1)))
            response = try wire.send("POST", "/api/sync/enroll", headers: [("Content-Type", "application/json")], body: body)
            attempt += 1
        }
        guard response.status == 200, let id = response.json?["deviceId"]?.stringValue,
              let certificate = response.json?["deviceCert"]?.stringValue
        else { return (nil, response) }
        let claims = certificate.split(separator: ".").first.flatMap { Base64URL.decode($0) }.flatMap { try? JSONValue.parse($0) }
        return (ConformanceDevice(
            id: id, key: key, scopeKind: claims?["scope"]?["kind"]?.stringValue ?? "?", scopeId: claims?["scope"]?["id"]?.stringValue ?? "?",
            certificate: certificate), response)
    }

    // MARK: Set-up

    private func setUp() throws {
        let before = Date().timeIntervalSince1970
        let time: WireResponse
        do { time = try wire.get("/api/sync/time") } catch { throw Broken("\(options.server.absoluteString) does not answer: \(error)") }
        let after = Date().timeIntervalSince1970
        if let seconds = time.json?["unixSeconds"]?.intValue { offset = Double(seconds) + 0.5 - (before + after) / 2 }

        var deviceCode = options.deviceCode
        registrationToken = options.registrationToken
        if let token = options.staffToken {
            let staff = StaffClient(wire: wire, token: token)
            let sessions: [JSONValue]
            do { sessions = try staff.sessions() } catch let error as StaffClient.StaffError where error.status == 401 {
                throw Broken("the staff token was refused (401): check --staff-token")
            }
            self.staff = staff
            let chosen = options.session.flatMap { id in sessions.first { $0["id"]?.stringValue == id } }
                ?? sessions.first { ($0["slideCount"]?.intValue ?? 0) >= 2 && $0["state"]?.stringValue == "draft" }
                ?? sessions.first { ($0["slideCount"]?.intValue ?? 0) >= 2 } ?? sessions.first
            guard let chosen, let id = chosen["id"]?.stringValue else {
                throw Broken(options.session.map { "the server has no session \($0)" } ?? "the server holds no session: import a package first")
            }
            session = id
            series = chosen["seriesId"]?.stringValue
            otherSession = sessions.compactMap { $0["id"]?.stringValue }.first { $0 != id }
            deviceCode = try staff.deviceCode(session: id)
            singleUseCode = try staff.deviceCode(session: id)
            badKeyToken = try staff.deviceCode(session: id)
            if let series { registrationToken = try staff.registrationToken(series: series) } else { missing["a series"] = "session \(id) belongs to no series" }
        } else {
            missing["a staff token"] = "give --staff-token"
            singleUseCode = deviceCode
            badKeyToken = registrationToken
        }

        if let code = deviceCode {
            let (made, response) = try enroll(code)
            if let made { device = made } else { missing["a device"] = "enrolling with the device code answered \(response.summary)" }
        } else {
            missing["a device"] = "give --device-code or --staff-token"
        }
        if let token = registrationToken {
            for _ in 0..<2 {
                let (made, response) = try enroll(token)
                if let made { seriesDevices.append(made) } else { missing["a series device"] = "enrolling with the registration token answered \(response.summary)" }
            }
            if series == nil, let first = seriesDevices.first, first.scopeKind == "series" { series = first.scopeId }
        } else {
            missing["a series device"] = "give --registration-token or --staff-token (for a session in a series)"
        }
        if device == nil, let first = seriesDevices.first { device = first }
        if session == nil { session = options.session ?? chooseSession() }
        if session == nil { missing["a session"] = "give --session" }

        if let staff, let id = session {
            if let (made, _) = try? enroll(try staff.deviceCode(session: id)), let made {
                try staff.revokeDevice(made.id)
                revoked = made
            }
            limited = try enroll(try staff.deviceCode(session: id)).device
        } else {
            missing["a revoked device"] = "needs --staff-token"
            limited = seriesDevices.last
        }
    }

    /// Without a staff token: the device's own session, or the first session its series lists.
    private func chooseSession() -> String? {
        guard let device else { return nil }
        if device.scopeKind == "session" { return device.scopeId }
        guard device.scopeKind == "series", let answer = try? signed("GET", "/api/sync/series/\(device.scopeId)/manifest", by: device),
              answer.status == 200
        else { return nil }
        return answer.json?["sessions"]?.arrayValue?.first?["id"]?.stringValue
    }
}
