import PulseCore
import PulseHTTPServer
import PulseServerStorage

extension SyncAPI {
    /// `POST /api/sessions/{id}/diag`: a device's connection sample, the same the web client posts, so app
    /// devices appear in the moderator's live view and the end-of-event report with `build` = the app
    /// version. `204` once stored; a bad body `400` naming the field; a replayed request the flat 404.
    func diag(_ request: HTTPRequest, device: SyncCache.Device, session id: String, signature: DeviceSignature, now: Int64) throws -> HTTPResponse {
        guard let session = try entitledSession(device, id) else { return HTTPResponse(answers.notFound, "no:session") }
        let sample: DiagSample
        switch DiagBody.sample(request.body, session: session.id, device: device.record.id, at: now) {
        case let .success(valid): sample = valid
        case let .failure(problem): return answers.badRequest(field: problem.field, note: "diag:bad-request")
        }
        // A signature that verified has s in [1, n-1]: the key always exists.
        guard let replayKey = ReplayKey.of(signature: signature.signature) else { return HTTPResponse(answers.notFound, "no:signature") }
        let expiresAt = now + configuration.replayWindow
        return deferredWrite("diag") { [self] in
            guard try storage.recordSignedRequest(replayKey: replayKey, expiresAt: expiresAt, sample: sample, at: now) else {
                return HTTPResponse(answers.notFound, "no:replay")
            }
            liveSamples.note(sample)
            return HTTPResponse(status: 204, headers: [Self.noStore], note: "diag")
        }
    }
}

/// The diag sample's fields (docs/server.md, "Diagnostics"):
///
/// | field | type | rule |
/// |---|---|---|
/// | `build` | string | required: the app version, 1–64 characters |
/// | `platform` | string | required: `ios`, `android`, … (1–32 of `a-z 0-9 . _ -`) |
/// | `online` | boolean | required |
/// | `effectiveType` | string | optional: `slow-2g`, `2g`, `3g`, `4g`, `5g`, `wifi`, `ethernet`, `cellular`, `unknown` |
/// | `rttMs` | integer | optional: 0–600000 |
/// | `downlinkKbps` | number | optional: 0–10000000 |
///
/// Other fields are ignored (not stored), so an app may send more without breaking.
enum DiagBody {
    static let effectiveTypes: Set<String> = ["slow-2g", "2g", "3g", "4g", "5g", "wifi", "ethernet", "cellular", "unknown"]

    static func sample(_ body: [UInt8]?, session: String, device: String, at now: Int64) -> Result<DiagSample, RequestJSON.Problem> {
        let fields: [String: JSONValue]
        switch RequestJSON.object(body) {
        case let .success(object): fields = object
        case let .failure(problem): return .failure(problem)
        }
        guard let build = fields["build"]?.stringValue, DeviceText.isLabel(build, maxCharacters: 64) else { return .failure(.init(field: "build")) }
        guard let platform = fields["platform"]?.stringValue, RequestJSON.isPlatform(platform) else { return .failure(.init(field: "platform")) }
        guard case let .bool(online)? = fields["online"] else { return .failure(.init(field: "online")) }
        var connection: [String: JSONValue] = ["online": .bool(online)]
        if let value = fields["effectiveType"], value != .null {
            guard let text = value.stringValue, effectiveTypes.contains(text) else { return .failure(.init(field: "effectiveType")) }
            connection["effectiveType"] = .string(text)
        }
        if let value = fields["rttMs"], value != .null {
            guard let number = value.intValue, (0...600_000).contains(number) else { return .failure(.init(field: "rttMs")) }
            connection["rttMs"] = .int(number)
        }
        if let value = fields["downlinkKbps"], value != .null {
            let number: Double
            switch value {
            case let .int(whole): number = Double(whole)
            case let .double(fraction): number = fraction
            default: return .failure(.init(field: "downlinkKbps"))
            }
            guard number.isFinite, number >= 0, number <= 10_000_000 else { return .failure(.init(field: "downlinkKbps")) }
            connection["downlinkKbps"] = number == number.rounded() ? .int(Int(number)) : .double(number)
        }
        return .success(DiagSample(
            sessionId: session, deviceId: device, receivedAt: now, build: build, platform: platform, connection: .object(connection)))
    }
}
