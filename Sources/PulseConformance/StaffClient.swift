import Foundation
import PulseCore

/// The staff API (`/api/staff/…`, docs/server.md), as the suite uses it: mint codes and tokens, revoke a
/// device, read and drive a session. Any answer but 2xx is an error naming the call.
struct StaffClient: Sendable {
    let wire: any Wire
    let token: String

    func call(_ method: String, _ path: String, _ body: JSONValue? = nil) throws -> JSONValue {
        var headers: [(name: String, value: String)] = [("Authorization", "Bearer \(token)")]
        if body != nil { headers.append(("Content-Type", "application/json")) }
        let response = try wire.send(method, "/api/staff/" + path, headers: headers, body: body?.canonicalBytes)
        guard (200..<300).contains(response.status) else {
            throw StaffError(message: "staff API \(method) /api/staff/\(path) answered \(response.summary)", status: response.status)
        }
        return response.json ?? .null
    }

    struct StaffError: Error, CustomStringConvertible {
        let message: String
        let status: Int
        var description: String { message }
    }

    func sessions() throws -> [JSONValue] { try call("GET", "sessions").arrayValue ?? [] }
    func session(_ id: String) throws -> JSONValue { try call("GET", "sessions/\(id)") }
    @discardableResult
    func set(_ id: String, _ fields: JSONValue) throws -> JSONValue { try call("PATCH", "sessions/\(id)", fields) }
    @discardableResult
    func advance(_ id: String, to slide: Int) throws -> JSONValue { try call("POST", "sessions/\(id)/advance", ["maxShown": .int(slide)]) }
    func live(_ id: String) throws -> JSONValue { try call("GET", "sessions/\(id)/live") }
    func revokeDevice(_ id: String) throws { _ = try call("POST", "devices/\(id)/revoke") }

    /// A new single-use device code for a session or a series; its secret.
    func deviceCode(session: String? = nil, series: String? = nil) throws -> String {
        let scope: JSONValue = session.map { ["session": .string($0)] } ?? ["series": .string(series ?? "")]
        guard let secret = try call("POST", "device-codes", scope)["secret"]?.stringValue else { throw Broken("staff API: a minted code without its secret") }
        return secret
    }

    /// A new registration token for a series; its secret.
    func registrationToken(series: String) throws -> String {
        guard let secret = try call("POST", "registration-tokens", ["series": .string(series)])["secret"]?.stringValue else {
            throw Broken("staff API: a minted token without its secret")
        }
        return secret
    }
}
