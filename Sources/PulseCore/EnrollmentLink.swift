/// The one enrollment link of docs/console.md: the server's public URL and a device code or a
/// registration token, in one text a phone's camera reads from a QR code.
///
/// ```
/// https://sync.example.net/console/enroll#code=ABCD-EFGH-JKMN          a device code (single-use)
/// https://sync.example.net/console/enroll#token=<43 base64url chars>   a registration token (an attendee link)
/// ```
///
/// - The server is everything before `/console/enroll`: `http` or `https`, a host (name, IPv4 or
///   `[IPv6]`), an optional port and an optional path prefix (a server behind a proxy at `/pulse`).
/// - The secret is in the fragment, which a browser never sends: a camera app that opens the link in a
///   browser leaves the code out of every request line, access log and `Referer`.
/// - Parsing is bounded (`maximumLength` bytes, printable ASCII only) and refuses anything else with a
///   `Problem` that says what was wrong, never echoing the secret.
public struct EnrollmentLink: Sendable, Equatable, CustomStringConvertible {
    /// What the link carries; both are posted as `token` to `POST /api/sync/enroll`.
    public enum Credential: Sendable, Equatable {
        /// A staff-minted device code, 12 letters or digits, hyphens allowed: `XXXX-XXXX-XXXX`.
        case deviceCode(String)
        /// A series registration token: 43 base64url characters.
        case registrationToken(String)

        /// The text the enrollment request carries.
        public var secret: String {
            switch self {
            case let .deviceCode(code): code
            case let .registrationToken(token): token
            }
        }

        /// The fragment key: `code` or `token`.
        public var key: String {
            switch self {
            case .deviceCode: "code"
            case .registrationToken: "token"
            }
        }
    }

    /// Why a text is no enrollment link (the description never holds the secret).
    public struct Problem: Error, Equatable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// A link is at most this many bytes (a URL, a 43-character token: far less in practice).
    public static let maximumLength = 1024
    /// The path after the server's URL.
    public static let path = "/console/enroll"

    /// The server's base URL, without a trailing slash: `https://sync.example.net` or `http://127.0.0.1:8080/pulse`.
    public let server: String
    public let credential: Credential

    /// A link for `credential` on `server` (a base URL as `serve --public-url` takes it).
    /// - Throws: `Problem` when the server URL or the credential has the wrong shape.
    public init(server: String, credential: Credential) throws(Problem) {
        self.server = try Self.checkedServer(Array(server.utf8), trailingSlashAllowed: true)
        try Self.check(credential)
        self.credential = credential
    }

    /// Reads a link; throws a `Problem` naming the first thing that is wrong.
    public init(parsing text: String) throws(Problem) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw Problem("the enrollment link is empty") }
        guard bytes.count <= Self.maximumLength else {
            throw Problem("the enrollment link is \(bytes.count) bytes, more than \(Self.maximumLength)")
        }
        guard bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw Problem("the enrollment link holds a space, a control character or a non-ASCII character")
        }
        guard let hash = bytes.firstIndex(of: UInt8(ascii: "#")) else {
            throw Problem("the enrollment link has no #code= or #token= part")
        }
        let address = Array(bytes[..<hash]), fragment = Array(bytes[(hash + 1)...])
        let suffix = Array(Self.path.utf8)
        guard address.count > suffix.count, Array(address.suffix(suffix.count)) == suffix else {
            throw Problem("the enrollment link's path must end in \(Self.path)")
        }
        server = try Self.checkedServer(Array(address.dropLast(suffix.count)), trailingSlashAllowed: false)
        credential = try Self.credential(fragment)
    }

    /// The base URL `text` names, normalized as a link carries it (lowercase scheme and host, no trailing
    /// slash): what `serve --public-url` accepts. Throws a `Problem` for anything a link could not carry.
    public static func server(_ text: String) throws(Problem) -> String {
        try checkedServer(Array(text.utf8), trailingSlashAllowed: true)
    }

    /// Reads a link, or nil (`init(parsing:)` says why).
    public init?(_ text: String) {
        guard let link = try? EnrollmentLink(parsing: text) else { return nil }
        self = link
    }

    /// The link's text.
    public var text: String { server + Self.path + "#" + credential.key + "=" + credential.secret }

    /// Only the server and the kind: a description that may be logged.
    public var description: String { "enrollment link for \(server) (\(credential.key))" }

    // MARK: Checks

    private static func credential(_ fragment: [UInt8]) throws(Problem) -> Credential {
        guard let equals = fragment.firstIndex(of: UInt8(ascii: "=")) else {
            throw Problem("the enrollment link's #part must be code=… or token=…")
        }
        let key = String(decoding: fragment[..<equals], as: UTF8.self)
        let value = String(decoding: fragment[(equals + 1)...], as: UTF8.self)
        let credential: Credential
        switch key {
        case "code": credential = .deviceCode(value)
        case "token": credential = .registrationToken(value)
        default: throw Problem("the enrollment link's #part must be code=… or token=…")
        }
        try check(credential)
        return credential
    }

    private static func check(_ credential: Credential) throws(Problem) {
        switch credential {
        case let .deviceCode(code):
            let bytes = Array(code.utf8)
            let characters = bytes.filter { $0 != UInt8(ascii: "-") }
            guard bytes.count <= 16, characters.count == 12, characters.allSatisfy(isAlphanumeric) else {
                throw Problem("the enrollment link's device code must be 12 letters or digits, like XXXX-XXXX-XXXX")
            }
        case let .registrationToken(token):
            let bytes = Array(token.utf8)
            guard bytes.count == 43, bytes.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }) else {
                throw Problem("the enrollment link's token must be 43 base64url characters")
            }
        }
    }

    /// `http(s)://host[:port][/prefix]`, lowercased scheme and host, without a trailing slash.
    private static func checkedServer(_ bytes: [UInt8], trailingSlashAllowed: Bool) throws(Problem) -> String {
        guard bytes.count <= maximumLength, bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw Problem("the server URL must be printable ASCII, at most \(maximumLength) bytes")
        }
        let lower = bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }
        let scheme: String
        if lower.starts(with: Array("https://".utf8)) {
            scheme = "https"
        } else if lower.starts(with: Array("http://".utf8)) {
            scheme = "http"
        } else {
            throw Problem("the server URL must start with https:// or http://")
        }
        let rest = Array(lower.dropFirst(scheme.utf8.count + 3))
        let slash = rest.firstIndex(of: UInt8(ascii: "/")) ?? rest.count
        let authority = Array(rest[..<slash])
        var prefix = Array(bytes.suffix(rest.count - slash))  // the path keeps its case
        if trailingSlashAllowed, prefix.last == UInt8(ascii: "/") { prefix.removeLast() }
        try checkAuthority(authority)
        guard prefix.allSatisfy(isPathCharacter), !prefix.contains(where: { $0 == UInt8(ascii: "?") }),
              !containsEmptyOrDotSegment(prefix)
        else { throw Problem("the server URL's path may hold only letters, digits, '-', '.', '_', '~' and '/'") }
        return scheme + "://" + String(decoding: authority, as: UTF8.self) + String(decoding: prefix, as: UTF8.self)
    }

    private static func checkAuthority(_ authority: [UInt8]) throws(Problem) {
        var host = authority[...]
        var port: ArraySlice<UInt8> = []
        if host.first == UInt8(ascii: "[") {
            guard let close = host.firstIndex(of: UInt8(ascii: "]")) else { throw Problem("the server URL's [IPv6] host has no ]") }
            let inside = host[(host.startIndex + 1)..<close]
            guard !inside.isEmpty, inside.count <= 45,
                  inside.allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") })
            else { throw Problem("the server URL's [IPv6] host is not an address") }
            let after = host[(close + 1)...]
            if !after.isEmpty {
                guard after.first == UInt8(ascii: ":") else { throw Problem("the server URL has something after its [IPv6] host") }
                port = after.dropFirst()
                guard !port.isEmpty else { throw Problem("the server URL's port is empty") }
            }
            host = host[...close]
        } else {
            if let colon = host.firstIndex(of: UInt8(ascii: ":")) {
                port = host[(colon + 1)...]
                host = host[..<colon]
                guard !port.isEmpty else { throw Problem("the server URL's port is empty") }
            }
            guard !host.isEmpty, host.count <= 253,
                  host.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }),
                  host.first != UInt8(ascii: "."), host.first != UInt8(ascii: "-")
            else { throw Problem("the server URL's host must be a name or an address (no user, no odd characters)") }
        }
        if !port.isEmpty {
            guard port.count <= 5, port.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let number = Int(String(decoding: port, as: UTF8.self)), (1...65535).contains(number)
            else { throw Problem("the server URL's port must be 1–65535") }
        }
    }

    private static func containsEmptyOrDotSegment(_ path: [UInt8]) -> Bool {
        guard !path.isEmpty else { return false }
        let segments = path.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        return segments.contains { $0.isEmpty || Array($0) == [0x2E] || Array($0) == [0x2E, 0x2E] }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
    }

    private static func isPathCharacter(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "~") || byte == UInt8(ascii: "/")
    }
}
