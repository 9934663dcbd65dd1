import Foundation
import PulseCore
import PulseCrypto
import PulseSystem

/// `POST /api/sync/enroll` (contract section 1): the key pair, the one-time credential, the certificate
/// checked against the server's published key, then `device.json` written last (the commit point).
public enum Enrollment {
    /// Enrolls a new device in `folder` with `token` (a device code or a registration token).
    ///
    /// The key is made and stored (0600) before the request, so an enrollment interrupted after the server
    /// committed never leaves the server with a key the device lost; a rerun in the same folder reuses it.
    /// Only a refusal from the server (the token or the key) removes a key made here.
    /// - Parameter requireSignedAnswers: refuse a server that publishes no answer keys (`GET /api/sync/answer-keys`
    ///   not 200), before the token is spent, instead of recording that it does not sign: what an app built for
    ///   a server that signs should do, so that a box in front of it (a WAF passing only the routes it knows, or
    ///   a hostile one) cannot switch the device's signature checks off at enrollment (docs/device.md).
    /// - Throws: `DeviceError`: the folder holds a device already, the token was refused (the flat 404),
    ///   the key was refused (`400 badKey`), the certificate does not verify (nothing is kept), no answer keys
    ///   while they are required.
    public static func enroll(
        server: URL, token: String, folder: DeviceFolder, name: String, platform: String, transport: any HTTPTransport,
        requireSignedAnswers: Bool = false, now: Date = Date()
    ) throws -> DeviceIdentity {
        if folder.isEnrolled, let existing = try? folder.identity() {
            throw DeviceError(.deviceFolder, "\(folder.path) holds device \(existing.deviceId) of \(existing.server) already; use another --device-dir")
        }
        let madeKey = !FileManager.default.fileExists(atPath: folder.keyPath)
        let key = madeKey ? try FileDeviceKey.create(at: folder.keyPath) : try folder.key()
        var refused = false
        do {
            let client = SyncClient(server: server, transport: transport)
            if requireSignedAnswers {
                let keys = try client.get(AnswerCheck.keySetRoute)
                guard keys.status == 200 else {
                    refused = true  // nothing was sent: the key made for this run is not kept
                    throw AnswerGuard.noAnswerKeys(keys.status)
                }
            }
            let body = JSONValue.object([
                "token": .string(token), "publicKey": .string(Data(key.publicKeySPKI).base64EncodedString()),
                "platform": .string(platform), "name": .string(name),
            ]).canonicalBytes
            let answer = try client.send(DeviceRequest(
                method: "POST", url: try client.url("/api/sync/enroll"), headers: [("Content-Type", "application/json")], body: body))
            guard answer.status == 200 else {
                refused = true
                if answer.status == 404 {
                    throw DeviceError(.server, "the server refused the token (the flat 404: unknown, already used, expired or revoked)")
                }
                if answer.status == 400, (try? JSONValue.parse(answer.body))?["error"]?.stringValue == "badKey" {
                    throw DeviceError(.server, "the server refused this device's public key (400 badKey)")
                }
                throw SyncClient.problem(answer, "POST /api/sync/enroll")
            }
            let reply = try? JSONValue.parse(answer.body)
            guard let deviceId = reply?["deviceId"]?.stringValue, let certificate = reply?["deviceCert"]?.stringValue else {
                throw DeviceError(.server, "POST /api/sync/enroll answered 200 without deviceId and deviceCert")
            }
            let keys = try client.get("/api/sync/device-cert-keys")
            guard keys.status == 200 else { throw SyncClient.problem(keys, "GET /api/sync/device-cert-keys") }
            let claims = try DeviceCertificateCheck.verify(certificate, keySet: keys.body, deviceId: deviceId, publicKeySPKI: key.publicKeySPKI)
            let formatter = ISO8601DateFormatter()
            let identity = DeviceIdentity(
                server: client.server.absoluteString, deviceId: deviceId, deviceCert: certificate, kid: claims["kid"]?.stringValue ?? "",
                scopeKind: claims["scope"]?["kind"]?.stringValue ?? "?", scopeId: claims["scope"]?["id"]?.stringValue ?? "?",
                name: name, platform: platform, enrolledAt: formatter.string(from: now))
            // Trust on first use of the answer keys (or: this server does not sign), before the commit point.
            try AnswerGuard(folder: folder, client: client).learnKeys(requireSigned: requireSignedAnswers)
            try identity.write(to: folder.identityURL)
            return identity
        } catch {
            // A key made for an enrollment the server refused is not kept; one from an earlier attempt is, and
            // so is one whose enrollment may have committed (a network failure, a certificate that did not check).
            if madeKey && refused { try? FileSystem.remove(folder.keyPath) }
            throw error
        }
    }
}
