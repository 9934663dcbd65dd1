import PulseCore
import PulseHTTPServer
import PulseServerStorage
import PulseSyncAPI

/// The staff API's answer to a console action.
public struct StaffAnswer: Sendable {
    public let status: Int
    /// The JSON body, when there is one.
    public let json: JSONValue?
    /// A 429's `Retry-After`, whole seconds (1 to 3600), when it has one.
    public var retryAfter: Int? = nil

    public var ok: Bool { (200..<300).contains(status) }

    /// One line for a person: the API's own `message`, or what the status means.
    public var message: String {
        if let text = json?["message"]?.stringValue, !text.isEmpty { return text }
        switch status {
        case 401: return "Your staff token is no longer valid: sign in again."
        case 403: return "Your staff token may not do that."
        case 404: return "There is no such thing any more."
        case 409: return "That change was refused in the current state."
        case 429: return "Too many requests: wait a moment and try again."
        case 503: return "The server is busy or its database is away: try again in a moment."
        default: return "The server could not do that (status \(status))."
        }
    }
}

extension PageContext {
    /// Calls the staff API as the signed-in principal: `path` under `/api/staff/` (built from ids, never from
    /// device strings), `body` as JSON. Roles, validation and the audit log are the staff API's, so the console
    /// decides nothing the API does not. Waits for a deferred answer (a post runs on an action thread).
    public func staff(_ method: HTTPMethod, _ path: String, _ body: JSONValue? = nil) -> StaffAnswer {
        var headers = HTTPRequestHeaders()
        for line in request.headers.values("x-forwarded-for") { headers.add("x-forwarded-for", line) }
        headers.add("content-type", Array("application/json".utf8))
        let call = HTTPRequest(
            method: method, target: Array(("/api/staff/" + path).utf8), headers: headers, client: request.client, body: body.map { $0.canonicalBytes })
        var response = console.staffRespond(call, as: principal)
        if let deferred = response.deferred {
            guard let answer = deferred.wait(timeout: 30) else { return StaffAnswer(status: 503, json: nil) }
            response = answer
        }
        let bytes: [UInt8]
        switch response.body {
        case let .bytes(body): bytes = body
        default: bytes = []
        }
        let retryAfter = response.headers.last { $0.name.lowercased() == "retry-after" }
            .flatMap { BoundedDecimal.parse($0.value, maxDigits: 4) }.map { min(max($0, 1), 3600) }
        return StaffAnswer(status: response.status, json: bytes.isEmpty ? nil : try? JSONValue.parse(bytes), retryAfter: retryAfter)
    }
}

extension PageResult {
    /// A staff API refusal as the page's answer: its status and line; a 429 (a presenter's or moderator's token
    /// changing faster than the staff API's `staffChangeLimit`) as `.limited`, so the script learns how long to
    /// wait (`Retry-After`).
    static func refused(_ answer: StaffAnswer) -> PageResult {
        guard answer.status == 429 else { return .refused(status: answer.status, message: answer.message) }
        let seconds = answer.retryAfter ?? 1
        return .limited(retryAfter: seconds, message: "Going too fast: the server takes only so many changes a second from your staff token. "
            + "Wait \(seconds == 1 ? "a second" : "\(seconds) seconds"), then press again.")
    }
}

extension Console {
    /// The staff API's answer to `request` as `principal` (`StaffAPI.respond(to:as:)`: its permission table,
    /// validation and audit log).
    func staffRespond(_ request: HTTPRequest, as principal: ConsolePrincipal) -> HTTPResponse {
        staff.respond(to: request, as: principal.staff)
    }
}
