import Foundation
import PulseCore
import PulseCrypto
import PulseServerStorage

/// The `deviceCert` an enrollment returns: `base64url(JSON) "." base64url(ES256 P1363 signature over
/// the first part's ASCII)`, signed with the server's `DeviceCertificateKey`.
///
/// The JSON is canonical (sorted keys, no whitespace): `{ "deviceId", "publicKey" (SPKI DER, standard
/// base64, as enrolled), "platform", "name", "scope": { "kind", "id" }, "issuedAt" (Unix seconds),
/// "kid" }`. The app checks it against `GET /api/sync/device-cert-keys` by `kid`.
public enum DeviceCertificate {
    /// The certificate of `device`, issued at `issuedAt`.
    public static func issue(for device: DeviceRecord, key: DeviceCertificateKey, issuedAt: Int64) throws -> String {
        let claims = JSONValue.object([
            "deviceId": .string(device.id), "publicKey": .string(Data(device.publicKey).base64EncodedString()),
            "platform": .string(device.platform), "name": .string(device.name),
            "scope": ["kind": .string(device.scope.kind), "id": .string(device.scope.id)],
            "issuedAt": .int(Int(issuedAt)), "kid": .string(key.keyId),
        ])
        let payload = Base64URL.encode(claims.canonicalBytes)
        let signature = try key.privateKey.signature(for: Array(payload.utf8))
        return payload + "." + Base64URL.encode(signature)
    }

    /// The claims of `certificate` when its signature verifies with `publicKey`; nil otherwise.
    public static func verify(_ certificate: String, publicKey: P256.PublicKey) -> JSONValue? {
        let parts = certificate.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let payload = Base64URL.decode(parts[0]), let signature = Base64URL.decode(parts[1]),
              publicKey.isValidSignature(signature, for: Array(parts[0].utf8))
        else { return nil }
        return try? JSONValue.parse(Data(payload))
    }
}
