import Foundation
import PulseCore
import PulseCrypto

/// Checks the `deviceCert` an enrollment returned against the server's published keys
/// (`GET /api/sync/device-cert-keys`, a JWK set): `base64url(claims) "." base64url(ES256 P1363 signature
/// over the first part's ASCII)`, as JWS does. The claims must name this device and its key.
public enum DeviceCertificateCheck {
    /// The certificate's claims, once its signature verified with the key `kid` of `keySet` and the claims
    /// name `deviceId` and `publicKeySPKI`.
    public static func verify(_ certificate: String, keySet: [UInt8], deviceId: String, publicKeySPKI: [UInt8]) throws -> JSONValue {
        let parts = certificate.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let payload = Base64URL.decode(parts[0]), let signature = Base64URL.decode(parts[1]),
              let claims = try? JSONValue.parse(payload)
        else { throw DeviceError(.server, "the device certificate is not base64url(claims).base64url(signature)") }
        guard let kid = claims["kid"]?.stringValue else { throw DeviceError(.server, "the device certificate names no kid") }
        let keys = (try? JSONValue.parse(keySet))?["keys"]?.arrayValue ?? []
        guard let jwk = keys.first(where: { $0["kid"]?.stringValue == kid }) else {
            throw DeviceError(.server, "the server publishes no key \(kid.prefix(16))… (GET /api/sync/device-cert-keys): the certificate cannot be checked")
        }
        guard jwk["kty"]?.stringValue == "EC", jwk["crv"]?.stringValue == "P-256",
              let x = jwk["x"]?.stringValue.flatMap({ Base64URL.decode($0) }), let y = jwk["y"]?.stringValue.flatMap({ Base64URL.decode($0) }),
              x.count == 32, y.count == 32, let key = try? P256.PublicKey(x963Representation: [0x04] + x + y)
        else { throw DeviceError(.server, "the published key \(kid.prefix(16))… is not a P-256 JWK") }
        guard key.isValidSignature(signature, for: Array(parts[0].utf8)) else {
            throw DeviceError(.server, "the device certificate's signature does not verify with the server's published key \(kid.prefix(16))…")
        }
        guard claims["deviceId"]?.stringValue == deviceId else {
            throw DeviceError(.server, "the device certificate names another device than the enrollment answered")
        }
        guard claims["publicKey"]?.stringValue == Data(publicKeySPKI).base64EncodedString() else {
            throw DeviceError(.server, "the device certificate names another public key than this device's")
        }
        return claims
    }
}
