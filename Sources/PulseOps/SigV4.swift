import Foundation
import PulseCrypto

/// AWS Signature Version 4 (header form), written over PulseCrypto's SHA-256 and HMAC-SHA256.
///
/// Proved against the AWS SigV4 test suite in `Tests/Fixtures/aws-sigv4`.
public struct SigV4: Sendable {
    public var credentials: AWSCredentials
    public var region: String
    public var service: String
    /// Remove `.`/`..` segments and repeated slashes from the path before signing (every service but S3).
    public var normalizePath: Bool

    public init(credentials: AWSCredentials, region: String, service: String, normalizePath: Bool) {
        self.credentials = credentials
        self.region = region
        self.service = service
        self.normalizePath = normalizePath
    }

    /// A request to sign: the path and query are given decoded; signing encodes them.
    public struct Request: Sendable {
        public var method: String
        /// Decoded path, for example `/bucket/assets/ab…`.
        public var path: String
        /// Decoded query parameters in any order.
        public var query: [(name: String, value: String)]
        /// Headers to sign (including `Host`); names in any case, repeats allowed.
        public var headers: [(name: String, value: String)]
        /// Lowercase hex SHA-256 of the body (or `UNSIGNED-PAYLOAD`).
        public var payloadHash: String

        public init(method: String, path: String, query: [(name: String, value: String)] = [],
                    headers: [(name: String, value: String)], payloadHash: String) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
            self.payloadHash = payloadHash
        }
    }

    /// Everything signing produced; the intermediate strings are exposed for the test suite.
    public struct Signature: Sendable {
        public var canonicalRequest: String
        public var stringToSign: String
        public var signature: String
        /// The value of the `Authorization` header.
        public var authorization: String
        /// Headers the caller must send besides its own: `X-Amz-Date` and, with a session token,
        /// `X-Amz-Security-Token`.
        public var addedHeaders: [(name: String, value: String)]
    }

    /// The empty body's hash.
    public static let emptyPayloadHash = SHA256.hex([UInt8]())

    /// Signs `request` at `date`. `X-Amz-Date` (and the session token, if any) are added and signed.
    /// - Throws: `CryptoError` if libcrypto fails to compute an HMAC.
    public func sign(_ request: Request, date: Date) throws -> Signature {
        let (amzDate, day) = Self.timestamps(date)
        var added: [(name: String, value: String)] = [("X-Amz-Date", amzDate)]
        if let token = credentials.sessionToken { added.append(("X-Amz-Security-Token", token)) }

        // Canonical headers: lowercase names, sorted; values trimmed, inner runs of spaces folded,
        // repeated names joined with commas in their original order.
        var merged: [String: [String]] = [:]
        for (name, value) in request.headers + added {
            merged[name.lowercased(), default: []].append(Self.trimHeaderValue(value))
        }
        let names = merged.keys.sorted()
        let canonicalHeaders = names.map { "\($0):\(merged[$0]!.joined(separator: ","))\n" }.joined()
        let signedHeaders = names.joined(separator: ";")

        let canonicalRequest = [
            request.method,
            canonicalPath(request.path),
            Self.canonicalQuery(request.query),
            canonicalHeaders,
            signedHeaders,
            request.payloadHash,
        ].joined(separator: "\n")

        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = [
            "AWS4-HMAC-SHA256", amzDate, scope, SHA256.hex(Array(canonicalRequest.utf8)),
        ].joined(separator: "\n")

        var key = try HMACSHA256.authenticationCode(for: Array(day.utf8), key: Array("AWS4\(credentials.secretAccessKey)".utf8))
        for part in [region, service, "aws4_request"] {
            key = try HMACSHA256.authenticationCode(for: Array(part.utf8), key: key)
        }
        let signature = Hex.encode(try HMACSHA256.authenticationCode(for: Array(stringToSign.utf8), key: key))
        let authorization = "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyId)/\(scope), "
            + "SignedHeaders=\(signedHeaders), Signature=\(signature)"
        return Signature(canonicalRequest: canonicalRequest, stringToSign: stringToSign, signature: signature,
                         authorization: authorization, addedHeaders: added)
    }

    /// `20150830T123600Z` and `20150830` in UTC.
    static func timestamps(_ date: Date) -> (String, String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ n: Int?) -> String { let n = n ?? 0; return n < 10 ? "0\(n)" : "\(n)" }
        let day = "\(c.year ?? 1970)\(two(c.month))\(two(c.day))"
        return ("\(day)T\(two(c.hour))\(two(c.minute))\(two(c.second))Z", day)
    }

    func canonicalPath(_ path: String) -> String {
        var segments = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if normalizePath {
            var out: [String] = []
            for segment in segments.dropFirst() {
                switch segment {
                case "", ".": continue
                case "..": _ = out.popLast()
                default: out.append(segment)
                }
            }
            let trailing = path.count > 1 && (path.hasSuffix("/") || path.hasSuffix("/.") || path.hasSuffix("/.."))
            segments = [""] + out + (trailing && !out.isEmpty ? [""] : [])
            if out.isEmpty { return "/" }
        }
        let encoded = segments.map { Self.percentEncode($0) }.joined(separator: "/")
        return encoded.isEmpty ? "/" : encoded
    }

    static func canonicalQuery(_ query: [(name: String, value: String)]) -> String {
        let pairs: [(String, String)] = query.map { (percentEncode($0.name), percentEncode($0.value)) }
        let sorted = pairs.sorted { (a: (String, String), b: (String, String)) -> Bool in
            a.0 == b.0 ? a.1 < b.1 : a.0 < b.0
        }
        return sorted.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    /// RFC 3986 encoding: everything but `A-Z a-z 0-9 - . _ ~` becomes `%XX` (uppercase hex).
    public static func percentEncode(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case 0x41...0x5a, 0x61...0x7a, 0x30...0x39, 0x2d, 0x2e, 0x5f, 0x7e: out.append(byte)
            default: out += [0x25, hex[Int(byte >> 4)], hex[Int(byte & 0x0f)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func trimHeaderValue(_ value: String) -> String {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }).joined(separator: " ")
    }
}
