import PulseCore

/// What the protected header of a `Pulse-Signature` binds an answer to (docs/server.md, "Signed
/// answers"): which request it answers (`route`, `query`, `device`, `status`), where it stands in the
/// server's history (`seq`, `packageVersion` or `deckVersion`) and how long it may be believed (`iat`,
/// `exp`). `alg` ("ES256"), `typ` ("pulse-answer") and `kid` are written by `AnswerSignature.sign`.
public struct AnswerClaims: Equatable, Sendable {
    /// The request path, e.g. "/api/sync/keys".
    public var route: String
    /// The raw query string as the device sent it; "" when none.
    public var query: String
    /// The device id of the signed request; "" for the public key set.
    public var device: String
    /// The HTTP status: 200 or 304.
    public var status: Int
    /// The session's change sequence (manifest, keys), the series' generation (series manifest) or the
    /// key set's generation (answer keys): never lower for a later answer to the same request.
    public var seq: Int
    /// The manifest's `packageVersion` (its ETag, also for a 304); manifests only.
    public var packageVersion: String?
    /// The keys answer's `deckVersion`; keys only.
    public var deckVersion: Int?
    /// Server Unix seconds when signed.
    public var iat: Int
    /// Server Unix seconds after which the answer is not to be believed (`iat` + the answer TTL).
    public var exp: Int
    /// The id of the key that signed (its RFC 7638 thumbprint): set by `verify`; `sign` writes its key's own
    /// and ignores this.
    public var kid: String?

    public init(
        route: String, query: String, device: String, status: Int, seq: Int, packageVersion: String? = nil, deckVersion: Int? = nil,
        iat: Int, exp: Int, kid: String? = nil
    ) {
        self.route = route
        self.query = query
        self.device = device
        self.status = status
        self.seq = seq
        self.packageVersion = packageVersion
        self.deckVersion = deckVersion
        self.iat = iat
        self.exp = exp
        self.kid = kid
    }

    /// The protected header with `kid`, as a JSON object (canonical bytes are what is signed).
    func protectedHeader(kid: String) -> JSONValue {
        var fields: [String: JSONValue] = [
            "alg": .string(AnswerSignature.algorithm), "typ": .string(AnswerSignature.type), "kid": .string(kid),
            "route": .string(route), "query": .string(query), "device": .string(device),
            "status": .int(status), "seq": .int(seq), "iat": .int(iat), "exp": .int(exp),
        ]
        if let packageVersion { fields["packageVersion"] = .string(packageVersion) }
        if let deckVersion { fields["deckVersion"] = .int(deckVersion) }
        return .object(fields)
    }

    /// The claims of a parsed protected header; unknown members are ignored, every required one must be
    /// there with its type.
    init(protectedHeader header: JSONValue) throws(AnswerSignatureError) {
        guard let fields = header.objectValue else { throw .malformed("the protected header is not a JSON object") }
        func string(_ name: String) throws(AnswerSignatureError) -> String {
            guard let value = fields[name] else { throw .malformed("the protected header has no \"\(name)\"") }
            guard let text = value.stringValue else { throw .malformed("\"\(name)\" is not a string") }
            return text
        }
        func int(_ name: String) throws(AnswerSignatureError) -> Int {
            guard let value = fields[name] else { throw .malformed("the protected header has no \"\(name)\"") }
            guard let number = value.intValue else { throw .malformed("\"\(name)\" is not an integer") }
            return number
        }
        guard try string("alg") == AnswerSignature.algorithm else { throw .malformed("\"alg\" is not \"ES256\"") }
        guard try string("typ") == AnswerSignature.type else { throw .malformed("\"typ\" is not \"pulse-answer\"") }
        let kid = try string("kid")
        guard AnswerSignature.isKeyId(kid) else { throw .malformed("\"kid\" is not a key thumbprint (43 base64url characters)") }
        route = try string("route")
        query = try string("query")
        device = try string("device")
        status = try int("status")
        seq = try int("seq")
        iat = try int("iat")
        exp = try int("exp")
        guard (100...599).contains(status) else { throw .malformed("\"status\" is not an HTTP status") }
        guard seq >= 0, iat >= 0, exp >= iat else { throw .malformed("\"seq\", \"iat\" or \"exp\" is out of range (negative, or exp before iat)") }
        packageVersion = nil
        deckVersion = nil
        if fields["packageVersion"] != nil { packageVersion = try string("packageVersion") }
        if fields["deckVersion"] != nil { deckVersion = try int("deckVersion") }
        self.kid = kid
    }
}
