import PulseHTTPServer
import PulseServerStorage

/// What the console reads of a request's headers: the session cookie, whether the request came over TLS
/// (through a trusted proxy that says `X-Forwarded-Proto: https`; pulse-server itself speaks plain HTTP),
/// the server's own origin, and whether the request comes from that origin.
struct RequestFacts {
    static let cookieName = "pulse_console"

    /// The value of the console's cookie, if the request carries one (the first, if several).
    static func sessionCookie(_ request: HTTPRequest) -> String? {
        for line in request.headers.values("cookie") {
            guard line.count <= 8192 else { continue }
            for part in line.split(separator: UInt8(ascii: ";")) {
                let pair = part.drop { $0 == 0x20 || $0 == 0x09 }
                guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { continue }
                guard pair[pair.startIndex..<equals].elementsEqual(cookieName.utf8) else { continue }
                let value = pair[pair.index(after: equals)...]
                guard value.count <= 64, value.allSatisfy(isTokenByte) else { return nil }
                return String(decoding: value, as: UTF8.self)
            }
        }
        return nil
    }

    /// base64url characters (the id and CSRF tokens).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    /// True when the request reached pulse-server from a trusted proxy (`--trusted-proxy`) that says it came
    /// over TLS (`X-Forwarded-Proto: https`, its last value: the proxy nearest to us appended it).
    static func isSecure(_ request: HTTPRequest, trustedProxies: [IPNetwork]) -> Bool {
        guard let peer = request.client, !trustedProxies.isEmpty else { return false }
        let address = IPAddress(bytes: peer.bytes)
        guard trustedProxies.contains(where: { $0.contains(address) }) else { return false }
        guard let header = request.headers.values("x-forwarded-proto").last else { return false }
        let last = header.split(separator: UInt8(ascii: ",")).last ?? []
        let value = String(decoding: last, as: UTF8.self).trimmingSpaces.lowercased()
        return value == "https"
    }

    /// The server's own origin (`scheme://host[:port]`, lowercase): the configured public URL's, else the
    /// request's `Host` with the scheme the request came over. Nil when neither gives one.
    static func ownOrigin(_ request: HTTPRequest, publicURL: String?, secure: Bool) -> String? {
        if let publicURL { return origin(of: publicURL) }
        guard let host = request.headers["host"], !host.isEmpty, host.count <= 255,
              host.allSatisfy({ isHostByte($0) })
        else { return nil }
        return (secure ? "https://" : "http://") + String(decoding: host, as: UTF8.self).lowercased()
    }

    /// `scheme://host[:port]` of an absolute http(s) URL, lowercase; nil otherwise.
    static func origin(of url: String) -> String? {
        let lower = url.lowercased()
        for scheme in ["https://", "http://"] where lower.hasPrefix(scheme) {
            let rest = lower.dropFirst(scheme.count)
            let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            guard !host.isEmpty, host.utf8.allSatisfy(isHostByte) else { return nil }
            return scheme + host
        }
        return nil
    }

    /// Letters, digits, `.`, `-`, `:`, `[`, `]` (a host, an IPv6 literal, a port).
    static func isHostByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A)
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "[")
            || byte == UInt8(ascii: "]")
    }

    /// Whether a state-changing request comes from the console's own origin: `Origin` must be it. A browser
    /// sends `Origin: null` for a same-origin form post from a page with `Referrer-Policy: no-referrer` (the
    /// Fetch standard), so `null` or no `Origin` falls back to `Sec-Fetch-Site: same-origin`, then to
    /// `Referer`; nothing at all is refused. (The CSRF token is checked besides.)
    static func isSameOrigin(_ request: HTTPRequest, own: String?) -> Bool {
        guard let own else { return false }
        let sent = request.headers["origin"].map { String(decoding: $0, as: UTF8.self).lowercased() }
        if let sent, sent != "null" { return sent == own }
        if let site = request.headers["sec-fetch-site"] { return site.elementsEqual("same-origin".utf8) }
        if let referer = request.headers["referer"] {
            return origin(ofReferer: referer) == own
        }
        return false
    }

    private static func origin(ofReferer referer: [UInt8]) -> String? {
        guard referer.count <= 4096 else { return nil }
        return origin(of: String(decoding: referer, as: UTF8.self))
    }

    /// The `Set-Cookie` of a new session.
    static func sessionCookieHeader(_ id: String, secure: Bool) -> HTTPHeader {
        HTTPHeader("Set-Cookie", "\(cookieName)=\(id); Path=/console; HttpOnly; SameSite=Strict" + (secure ? "; Secure" : ""))
    }

    /// The `Set-Cookie` that removes it.
    static func clearedCookieHeader(secure: Bool) -> HTTPHeader {
        HTTPHeader("Set-Cookie", "\(cookieName)=; Path=/console; Max-Age=0; HttpOnly; SameSite=Strict" + (secure ? "; Secure" : ""))
    }
}
