import PulseHTTPServer

/// The headers every console response carries (docs/console.md says why each is there).
public enum SecurityHeaders {
    /// Scripts, styles and everything else only from the console's own hashed assets: no inline script or
    /// style, no framing, no `<base>`, forms post only here.
    public static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// On every response, pages, assets, errors and streams alike.
    public static let common = [
        HTTPHeader("Content-Security-Policy", contentSecurityPolicy),
        HTTPHeader("X-Content-Type-Options", "nosniff"),
        HTTPHeader("Referrer-Policy", "no-referrer"),
    ]

    /// Pages (and every answer but the immutable assets): never kept by a cache.
    public static let noStore = HTTPHeader("Cache-Control", "no-store")
    /// The hashed assets: the URL changes when the bytes do.
    public static let immutable = HTTPHeader("Cache-Control", "public, max-age=31536000, immutable")

    /// `response` with the common headers, and `no-store` unless it says otherwise.
    /// A prepared (`SharedResponse`) answer is rebuilt from its parts, so the headers are really sent; a
    /// deferred one must be completed with an applied answer by whoever defers it.
    static func applied(to response: HTTPResponse) -> HTTPResponse {
        var headers = response.headers
        let names = Set(headers.map { $0.name.lowercased() })
        for header in common where !names.contains(header.name.lowercased()) { headers.append(header) }
        if !names.contains("cache-control") { headers.append(noStore) }
        return HTTPResponse(status: response.status, headers: headers, body: response.body, note: response.note)
    }
}
