extension P256.PublicKey {
    /// The key as a JSON Web Key (RFC 7517/7518), members in this order:
    /// `{"kty":"EC","crv":"P-256","x":…,"y":…,"kid":…,"alg":"ES256","use":"sig"}`, coordinates in
    /// unpadded base64url.
    /// - Parameter kid: the key id; by default the RFC 7638 thumbprint.
    public func jwk(kid: String? = nil) -> String {
        let x = Base64URL.encode(self.x), y = Base64URL.encode(self.y)
        return "{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"\(x)\",\"y\":\"\(y)\",\"kid\":\(jsonString(kid ?? jwkThumbprint)),"
            + "\"alg\":\"ES256\",\"use\":\"sig\"}"
    }

    /// The RFC 7638 JWK thumbprint: unpadded base64url of SHA-256 over
    /// `{"crv":"P-256","kty":"EC","x":…,"y":…}` (required members, sorted, no whitespace).
    public var jwkThumbprint: String {
        let canonical = "{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"\(Base64URL.encode(x))\",\"y\":\"\(Base64URL.encode(y))\"}"
        return Base64URL.encode(SHA256.hash(Array(canonical.utf8)))
    }
}

/// A JSON string literal for `text`: quotes, backslashes and control characters escaped.
private func jsonString(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20:
            let hex = String(scalar.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}
