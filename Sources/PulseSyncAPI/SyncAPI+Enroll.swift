import Foundation
import PulseCore
import PulseCrypto
import PulseHTTPServer
import PulseServerStorage

extension SyncAPI {
    /// `POST /api/sync/enroll` `{token, publicKey, platform, name}` → `200 {"deviceId","deviceCert"}`.
    ///
    /// In order: the client address's token bucket (429), the body (400 naming the field), the public key
    /// (400 badKey: a DER SubjectPublicKeyInfo of a valid P-256 point, standard base64), a registration token's
    /// own bucket (429: a durable link enrolls at its rate, from every address together), then the token,
    /// consumed atomically by storage together with the device's insertion (a bad, expired, revoked or
    /// used token: the flat 404). The write runs on a write thread; the answer is sent once it committed.
    /// The same enrollment asked again (same token and key: its answer was lost) gets the same device.
    func enroll(_ request: HTTPRequest) throws -> HTTPResponse {
        guard request.method == .post else { return HTTPResponse(answers.postOnly, "method") }
        let now = clock()
        let client = ClientAddress.resolve(
            peer: request.client, forwardedFor: request.headers.values("x-forwarded-for"), trusted: configuration.trustedProxies)
        let bucket = "enroll " + (client?.description ?? "-")
        if case let .limited(retryAfter) = try storage.takeRateToken(bucket, limit: configuration.enrollLimit, at: now) {
            return answers.rateLimited(retryAfter: retryAfter, note: "enroll:rate-limited")
        }
        let fields: [String: JSONValue]
        switch RequestJSON.object(request.body) {
        case let .success(object): fields = object
        case let .failure(problem): return answers.badRequest(field: problem.field, note: "enroll:bad-request")
        }
        guard let token = fields["token"]?.stringValue else { return answers.badRequest(field: "token", note: "enroll:bad-request") }
        guard let keyText = fields["publicKey"]?.stringValue else { return answers.badRequest(field: "publicKey", note: "enroll:bad-request") }
        guard let platform = fields["platform"]?.stringValue, RequestJSON.isPlatform(platform) else {
            return answers.badRequest(field: "platform", note: "enroll:bad-request")
        }
        guard let name = fields["name"]?.stringValue, DeviceText.isLabel(name, maxCharacters: 100) else {
            return answers.badRequest(field: "name", note: "enroll:bad-request")
        }
        guard let der = Data(base64Encoded: keyText), let key = try? P256.PublicKey(derRepresentation: der) else {
            return HTTPResponse(answers.badKey, "enroll:bad-key")
        }
        guard let credential = CredentialSecret.hash(token) else { return HTTPResponse(answers.notFound, "no:token") }
        try cache.revalidate()
        if let registration = try cache.registrationToken(hash: credential) {
            let limit = RateLimit(
                rate: registration.limits.enrollRate.map(Double.init) ?? configuration.tokenEnrollLimit.rate,
                burst: registration.limits.enrollBurst.map(Double.init) ?? configuration.tokenEnrollLimit.burst)
            if case let .limited(retryAfter) = try storage.takeRateToken("enroll-token " + registration.listingId, limit: limit, at: now) {
                return answers.rateLimited(retryAfter: retryAfter, note: "enroll:token-rate-limited")
            }
        }
        return deferredWrite("enroll") { [self] in
            let device = NewDevice(id: try DeviceID.generate(), publicKey: key.derRepresentation, platform: platform, name: name)
            guard let record = try storage.enroll(credentialHash: credential, device: device, at: seconds(clock())) else {
                return HTTPResponse(answers.notFound, "no:token")
            }
            cache.remember(key)
            // A retry of an enrollment whose answer was lost gets the device it made (storage answers it), with a
            // certificate of the same claims: issued at the enrollment.
            let signer = certificateKeys.keys(at: try cache.revalidate()).signer
            let certificate = try DeviceCertificate.issue(for: record, key: signer, issuedAt: record.enrolledAt)
            return SyncAnswers.json(
                200, ["deviceId": .string(record.id), "deviceCert": .string(certificate)], note: record.id == device.id ? "enrolled" : "enrolled:again")
        }
    }
}

/// Request bodies as JSON objects, and the shapes of their common fields.
public enum RequestJSON {
    public struct Problem: Error {
        public var field: String
    }

    /// The body as a JSON object; the problem names `body` when there is none or it is not an object.
    public static func object(_ body: [UInt8]?) -> Result<[String: JSONValue], Problem> {
        guard let body, !body.isEmpty, let value = try? JSONValue.parse(Data(body)), case let .object(fields) = value else {
            return .failure(Problem(field: "body"))
        }
        return .success(fields)
    }

    /// `ios`, `android`, …: 1 to 32 of `a-z 0-9 . _ -`.
    static func isPlatform(_ text: String) -> Bool {
        let bytes = text.utf8
        return (1...32).contains(bytes.count) && bytes.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
    }
}
