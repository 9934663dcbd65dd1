import PulseCore
import PulseCrypto

/// One answer-signing public key as `GET /api/sync/answer-keys` publishes it: the JWK
/// `{"kty":"EC","crv":"P-256","x","y","kid","alg":"ES256","use":"sig"}` plus `signsFrom` (Unix seconds:
/// the key signs no answer before) and, for a retiring key, `retiresAt` (Unix seconds: the last answer it
/// signed has expired by then).
public struct AnswerKey: Equatable, Sendable {
    public let publicKey: P256.PublicKey
    public let signsFrom: Int
    public let retiresAt: Int?

    /// The key id: the RFC 7638 thumbprint of `publicKey`.
    public var kid: String { publicKey.jwkThumbprint }

    public init(publicKey: P256.PublicKey, signsFrom: Int, retiresAt: Int? = nil) {
        self.publicKey = publicKey
        self.signsFrom = signsFrom
        self.retiresAt = retiresAt
    }

    var jwk: JSONValue {
        var fields: [String: JSONValue] = [
            "kty": "EC", "crv": "P-256", "x": .string(Base64URL.encode(publicKey.x)), "y": .string(Base64URL.encode(publicKey.y)),
            "kid": .string(kid), "alg": .string(AnswerSignature.algorithm), "use": "sig", "signsFrom": .int(signsFrom),
        ]
        if let retiresAt { fields["retiresAt"] = .int(retiresAt) }
        return .object(fields)
    }
}

/// The body of `GET /api/sync/answer-keys`: `{"keys":[<JWK>, …]}` in canonical JSON.
public enum AnswerKeySet {
    /// The longest key set accepted (bytes), and the most keys.
    public static let maxByteCount = 65_536
    public static let maxKeyCount = 32

    /// The canonical JSON of `keys` (no trailing newline).
    public static func encode(_ keys: [AnswerKey]) -> [UInt8] {
        JSONValue.object(["keys": .array(keys.map(\.jwk))]).canonicalBytes
    }

    /// The keys of a key set. Unknown members are ignored; every key must be an EC P-256 ES256 signing
    /// key whose `kid` is its own thumbprint, with an integer `signsFrom`.
    /// - Throws: `AnswerSignatureError.malformed` naming the rule broken.
    public static func parse(_ bytes: some Collection<UInt8>) throws(AnswerSignatureError) -> [AnswerKey] {
        guard bytes.count <= maxByteCount else { throw .malformed("the key set is longer than \(maxByteCount) bytes") }
        let document: JSONValue
        do { document = try JSONValue.parse(Array(bytes)) } catch { throw .malformed("the key set is not JSON") }
        guard let list = document["keys"]?.arrayValue else { throw .malformed("the key set has no \"keys\" array") }
        guard list.count <= maxKeyCount else { throw .malformed("the key set has more than \(maxKeyCount) keys") }
        var keys: [AnswerKey] = []
        for (index, entry) in list.enumerated() {
            keys.append(try key(entry, index: index))
        }
        return keys
    }

    private static func key(_ entry: JSONValue, index: Int) throws(AnswerSignatureError) -> AnswerKey {
        let at = "key \(index)"
        guard entry.objectValue != nil else { throw .malformed("\(at) is not an object") }
        guard entry["kty"]?.stringValue == "EC", entry["crv"]?.stringValue == "P-256" else { throw .malformed("\(at) is not an EC P-256 key") }
        if let alg = entry["alg"], alg.stringValue != AnswerSignature.algorithm { throw .malformed("\(at) is not an ES256 key") }
        if let use = entry["use"], use.stringValue != "sig" { throw .malformed("\(at) is not a signing key") }
        guard let x = entry["x"]?.stringValue.flatMap({ Base64URL.decode($0) }), x.count == P256.coordinateByteCount,
              let y = entry["y"]?.stringValue.flatMap({ Base64URL.decode($0) }), y.count == P256.coordinateByteCount
        else { throw .malformed("\(at) has no 32-byte base64url \"x\" and \"y\"") }
        let publicKey: P256.PublicKey
        do { publicKey = try P256.PublicKey(x963Representation: [0x04] + x + y) } catch { throw .malformed("\(at) is not a point on P-256") }
        guard let kid = entry["kid"]?.stringValue, kid == publicKey.jwkThumbprint else {
            throw .malformed("\(at): \"kid\" is not the key's RFC 7638 thumbprint")
        }
        guard let signsFrom = entry["signsFrom"]?.intValue else { throw .malformed("\(at) has no integer \"signsFrom\"") }
        var retiresAt: Int?
        if let value = entry["retiresAt"] {
            guard let number = value.intValue else { throw .malformed("\(at): \"retiresAt\" is not an integer") }
            retiresAt = number
        }
        return AnswerKey(publicKey: publicKey, signsFrom: signsFrom, retiresAt: retiresAt)
    }
}
