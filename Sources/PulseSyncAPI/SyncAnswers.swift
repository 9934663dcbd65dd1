import Foundation
import PulseCore
import PulseHTTPServer
import PulseServerStorage

/// Every fixed answer of the sync API, built once. In particular the one "no" of the device-scoped
/// routes: `notFound` is the answer to a malformed or missing `X-Pulse-Device`, an unknown or revoked
/// device, a bad signature, a session that does not exist or that the device is not entitled to, a
/// wrong method, a replayed POST, a bad enrollment token and an unknown route. It is one prepared
/// response, so the bytes cannot drift apart between those cases: status, headers and body are the same
/// (`SyncFlatnessTests` compares them off the wire). The access log note says which case it was.
public final class SyncAnswers: Sendable {
    /// `404 {"error":"notFound"}`: the flat "no".
    public let notFound = SharedResponse(SyncAnswers.json(404, #"{"error":"notFound"}"#))
    /// `401 {"error":"staleSignature"}`: the timestamp is more than the window away from the server's
    /// clock. Given before the device is looked up, so it says nothing about the device.
    let stale = SharedResponse(SyncAnswers.json(
        401, #"{"error":"staleSignature"}"#, extra: [HTTPHeader("WWW-Authenticate", #"PulseDevice error="staleSignature""#)]))
    /// `401` for the staff API without a valid bearer token.
    public let unauthorized = SharedResponse(SyncAnswers.json(
        401, #"{"error":"unauthorized"}"#, extra: [HTTPHeader("WWW-Authenticate", #"Bearer realm="pulse-server""#)]))
    /// `400 {"error":"badKey"}`: the enrollment's public key is not a valid P-256 key.
    let badKey = SharedResponse(SyncAnswers.json(400, #"{"error":"badKey"}"#))
    /// `500`, with no internal text.
    let internalError = SharedResponse(SyncAnswers.json(500, #"{"error":"internal"}"#))
    /// `503` while the server is stopping, a queue is full, or the database cannot be reached.
    let unavailable = SharedResponse(SyncAnswers.json(503, #"{"error":"unavailable"}"#, extra: [HTTPHeader("Retry-After", "1")]))
    /// `405` on the public read routes and on enroll (the device-scoped ones answer `notFound`).
    let readOnly = SharedResponse(SyncAnswers.json(405, #"{"error":"methodNotAllowed"}"#, extra: [HTTPHeader("Allow", "GET, HEAD")]))
    let postOnly = SharedResponse(SyncAnswers.json(405, #"{"error":"methodNotAllowed"}"#, extra: [HTTPHeader("Allow", "POST")]))
    let healthy = SharedResponse(HTTPResponse(
        status: 200, headers: [HTTPHeader("Content-Type", "text/plain; charset=utf-8"), HTTPHeader("Cache-Control", "no-store")],
        body: .bytes(Array("ok\n".utf8))))

    /// `429 {"error":"rateLimited"}` with `Retry-After` in whole seconds.
    public func rateLimited(retryAfter: Int, note: String) -> HTTPResponse {
        var response = Self.json(429, #"{"error":"rateLimited"}"#, extra: [HTTPHeader("Retry-After", String(retryAfter))])
        response.note = note
        return response
    }

    /// `400 {"error":"badRequest","field":…}` naming what was wrong.
    func badRequest(field: String, note: String = "bad-request") -> HTTPResponse {
        var response = Self.json(400, JSONValue.object(["error": "badRequest", "field": .string(field)]).canonicalBytes)
        response.note = note
        return response
    }

    /// A JSON answer that no cache may keep.
    static func json(_ status: Int, _ body: String, extra: [HTTPHeader] = []) -> HTTPResponse {
        json(status, Array(body.utf8), extra: extra)
    }

    static func json(_ status: Int, _ body: [UInt8], extra: [HTTPHeader] = [], cacheControl: String = "no-store") -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: [HTTPHeader("Content-Type", "application/json"), HTTPHeader("Cache-Control", cacheControl)] + extra,
            body: .bytes(body))
    }

    /// A JSON value as an answer (canonical bytes, a newline at the end for people using curl).
    public static func json(_ status: Int, _ value: JSONValue, note: String, cacheControl: String = "no-store") -> HTTPResponse {
        var response = json(status, value.canonicalBytes + [0x0a], cacheControl: cacheControl)
        response.note = note
        return response
    }
}

extension SyncAnswers {
    /// The JSON answer of a `ServerError` that is the request's fault (`{"error","message"}`; the staff API's
    /// and a deferred write's).
    public static func error(_ error: ServerError) -> HTTPResponse {
        let name = switch error.kind {
        case .badInput: "badRequest"
        case .notFound: "notFound"
        case .conflict: "conflict"
        case .unsafeFile, .storage: "internal"
        case .unavailable: "unavailable"
        }
        return SyncAnswers.json(error.httpStatus, ["error": .string(name), "message": .string(error.message)], note: "staff:" + name)
    }
}

extension HTTPResponse {
    /// `shared` with a note for the access log.
    public init(_ shared: SharedResponse, _ note: String) { self.init(shared, note: note) }
}
