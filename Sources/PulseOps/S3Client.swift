import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PulseCrypto
import Synchronization

/// An object as listed by S3 (or found in a folder target).
public struct TargetObject: Sendable, Equatable {
    /// Path relative to the target root, for example `assets/ab12…`.
    public var path: String
    public var size: Int
    /// File mtime or S3 `LastModified`: when it was published.
    public var modified: Date

    public init(path: String, size: Int, modified: Date) {
        self.path = path
        self.size = size
        self.modified = modified
    }
}

/// A minimal S3 client: path-style addressing (`<endpoint>/<bucket>/<key>`), SigV4-signed requests,
/// retries with exponential backoff for transport errors, 5xx, throttling and answers that do not hold
/// up (a listing cut short, a stored object whose ETag is not the MD5 of what was sent).
public final class S3Client: Sendable {
    public let endpoint: URL
    public let region: String
    public let bucket: String
    let signer: SigV4
    let retries: Int
    let http: HTTPClient
    /// HTTP requests sent so far, retries included.
    let requestCount = Atomic<Int>(0)

    /// - Parameters:
    ///   - retries: extra attempts after a failed one.
    ///   - timeout: seconds without any progress after which a request fails (then is retried).
    public init(endpoint: URL, region: String, bucket: String, credentials: AWSCredentials, retries: Int = 4, timeout: TimeInterval = 30) {
        self.endpoint = endpoint
        self.region = region
        self.bucket = bucket
        self.signer = SigV4(credentials: credentials, region: region, service: "s3", normalizePath: false)
        self.retries = retries
        self.http = HTTPClient(timeout: timeout)
    }

    /// `s3://bucket/key`, how errors name an object.
    func name(_ key: String) -> String { key.isEmpty ? "s3://\(bucket)" : "s3://\(bucket)/\(key)" }

    /// An object with what its response says about it.
    public struct Object: Sendable {
        public var body: Data
        /// The ETag as sent, quotes included: what `If-Match` takes.
        public var etag: String?
        public var lastModified: Date?
        /// The server's clock when it answered (the `Date` header): lease expiry is judged by it alone.
        public var serverDate: Date?
    }

    /// A precondition on a PUT (S3 conditional writes).
    public enum Condition: Sendable, Equatable {
        /// Only if no object exists at the key (`If-None-Match: *`): an atomic create.
        case absent
        /// Only if the object's ETag is still this one (`If-Match`): an atomic replace.
        case matches(String)
    }

    /// What a PUT did.
    public enum PutOutcome: Sendable, Equatable {
        /// Stored, and the store's ETag (quotes included) vouches for the bytes.
        case stored(etag: String)
        /// The condition did not hold (412): nothing was written.
        case preconditionFailed
    }

    /// The size of an object, or nil when there is none.
    public func head(_ key: String) throws -> Int? {
        try perform("HEAD", key: key, allow: [404]) { response in
            response.status == 404 ? nil : (response.headers["content-length"].flatMap(Int.init) ?? 0)
        }
    }

    /// An object's bytes, or nil when there is none.
    public func get(_ key: String) throws -> Data? { try getObject(key)?.body }

    /// An object with its ETag and times, or nil when there is none.
    public func getObject(_ key: String) throws -> Object? {
        try perform("GET", key: key, allow: [404]) { response in
            if response.status == 404 {
                if S3ErrorBody(response.body).code == "NoSuchBucket" { throw error(for: response, key: key) }
                return nil
            }
            if let length = response.headers["content-length"].flatMap(Int.init), length != response.body.count {
                throw Retry("the answer is \(response.body.count) bytes, its Content-Length says \(length)")
            }
            return Object(
                body: response.body, etag: response.headers["etag"],
                lastModified: response.headers["last-modified"].flatMap(S3XML.httpDate),
                serverDate: response.headers["date"].flatMap(S3XML.httpDate))
        }
    }

    /// Uploads an object and checks that what the store kept is what was sent: the body goes with
    /// `Content-MD5` and `x-amz-checksum-sha256` (S3 refuses a body that does not match them), and the
    /// answer's ETag must be the body's MD5 (a single-part upload's ETag is, unless the object is
    /// encrypted with KMS or a customer key) and its checksum, when the store returns one, the body's
    /// SHA-256. A mismatch is retried with the whole body, then is an error naming the object.
    /// - Parameter sha256: the body's SHA-256 when the caller has checked it already (a blob's name),
    ///   so that it is not computed twice.
    @discardableResult
    public func put(
        _ key: String, body: Data, contentType: String, cacheControl: String, condition: Condition? = nil, sha256: [UInt8]? = nil
    ) throws -> PutOutcome {
        let digest = sha256 ?? PulseCrypto.SHA256.hash(body)
        let md5 = MD5.hash(body)
        let checksum = Data(digest).base64EncodedString()
        var headers: [(name: String, value: String)] = [
            ("Content-Type", contentType),
            ("Cache-Control", cacheControl),
            ("Content-MD5", Data(md5).base64EncodedString()),
            ("x-amz-sdk-checksum-algorithm", "SHA256"),
            ("x-amz-checksum-sha256", checksum),
        ]
        switch condition {
        case .absent?: headers.append(("If-None-Match", "*"))
        case let .matches(etag)?: headers.append(("If-Match", etag))
        case nil: break
        }
        return try perform("PUT", key: key, body: body, headers: headers, payloadHash: Hex.encode(digest), allow: condition == nil ? [] : [412]) { response in
            if response.status == 412 { return .preconditionFailed }
            guard let etag = response.headers["etag"], !etag.isEmpty else { throw Retry("the store answered without an ETag") }
            let bare = etag.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            let encrypted = response.headers["x-amz-server-side-encryption"]?.hasPrefix("aws:kms") == true
                || response.headers["x-amz-server-side-encryption-customer-algorithm"] != nil
            if !encrypted, Self.isMD5ETag(bare), bare != Hex.encode(md5) {
                throw Retry("the store kept other bytes than were sent (ETag \(bare), the MD5 of the \(body.count) bytes sent is \(Hex.encode(md5)))")
            }
            if let stored = response.headers["x-amz-checksum-sha256"], stored != checksum {
                throw Retry("the store kept other bytes than were sent (its SHA-256 is \(stored), the body's \(checksum))")
            }
            return .stored(etag: etag)
        }
    }

    /// Deletes an object (no error if it is already gone). With `ifMatch`, only that version of it:
    /// returns false when the object is another one now (412).
    @discardableResult
    public func delete(_ key: String, ifMatch etag: String? = nil) throws -> Bool {
        try perform("DELETE", key: key, headers: etag.map { [("If-Match", $0)] } ?? [], allow: [404, 412]) { $0.status != 412 }
    }

    /// Every object whose key starts with `prefix` (ListObjectsV2, all pages, each read strictly:
    /// see `S3ListPage`). A page that does not parse is fetched again, then is an error: never a
    /// shorter list.
    public func list(prefix: String, maxKeys: Int = 1000) throws -> [TargetObject] {
        var objects: [TargetObject] = []
        var token: String?
        repeat {
            var query: [(name: String, value: String)] = [("list-type", "2"), ("prefix", prefix), ("max-keys", "\(maxKeys)")]
            if let token { query.append(("continuation-token", token)) }
            let page = try perform("GET", key: "", query: query, describing: name(prefix)) { response in
                do { return try S3ListPage(response.body) } catch let malformed as S3XML.Malformed {
                    throw Retry("the listing is malformed (\(malformed.reason)); nothing is decided from a partial listing")
                }
            }
            objects += page.objects
            token = page.nextToken
        } while token != nil
        return objects
    }

    /// Checks that the bucket exists and the credentials work: one small listing.
    public func checkBucket() throws {
        try perform("GET", key: "", query: [("list-type", "2"), ("max-keys", "1")]) { _ in }
    }

    // MARK: - Requests

    /// An answer that does not hold up: retried like a transport error, then reported with its reason.
    struct Retry: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// Sends a request until `read` accepts its answer, at most `retries + 1` times, with backoff. `read`
    /// gets every 2xx answer and those in `allow`; it throws `Retry` for an answer to try again.
    /// Errors name the object (`describing`, else the key's `s3://` name), or the endpoint when it cannot
    /// be reached at all, and say how many attempts were made.
    func perform<T>(
        _ method: String, key: String, query: [(name: String, value: String)] = [], body: Data = Data(),
        headers: [(name: String, value: String)] = [], payloadHash: String? = nil, allow: Set<Int> = [],
        describing: String? = nil, _ read: (HTTPResponse) throws -> T
    ) throws -> T {
        let object = describing ?? name(key)
        var attempt = 0
        while true {
            attempt += 1
            let last = attempt > retries
            let suffix = attempt > 1 ? " after \(attempt) attempts" : ""
            do {
                requestCount.add(1, ordering: .relaxed)
                let response = try http.send(request(method, key: key, query: query, body: body, headers: headers, payloadHash: payloadHash))
                if (200..<300).contains(response.status) || allow.contains(response.status) { return try read(response) }
                // 409 ConditionalRequestConflict: another conditional write to the key is in progress.
                let retryable = response.status >= 500 || response.status == 429 || response.status == 409
                if !retryable || last {
                    var failure = error(for: response, key: key)
                    if retryable { failure.message += suffix }
                    throw failure
                }
            } catch let retry as Retry {
                if last { throw OpsError(.failure, object, retry.reason + suffix) }
            } catch let error as OpsError {
                throw error
            } catch {
                if last { throw transportError(error, object: object, suffix: suffix) }
            }
            Thread.sleep(forTimeInterval: Self.backoff(attempt))
        }
    }

    /// 0.2 s, 0.4 s, 0.8 s … up to 5 s, with ±25% jitter so parallel workers do not retry in step.
    static func backoff(_ attempt: Int) -> TimeInterval {
        min(5, 0.2 * pow(2, Double(attempt - 1))) * Double.random(in: 0.75...1.25)
    }

    func request(
        _ method: String, key: String, query: [(name: String, value: String)], body: Data,
        headers: [(name: String, value: String)], payloadHash: String?
    ) throws -> URLRequest {
        let basePath = endpoint.path.hasSuffix("/") ? String(endpoint.path.dropLast()) : endpoint.path
        let path = basePath + "/" + bucket + (key.isEmpty ? "" : "/" + key)
        let encodedPath = path.split(separator: "/", omittingEmptySubsequences: false)
            .map { SigV4.percentEncode(String($0)) }.joined(separator: "/")
        let encodedQuery = SigV4.canonicalQuery(query)
        var origin = "\(endpoint.scheme ?? "https")://\(endpoint.host ?? "")"
        var host = endpoint.host ?? ""
        if let port = endpoint.port { origin += ":\(port)"; host += ":\(port)" }
        let url = URL(string: origin + encodedPath + (encodedQuery.isEmpty ? "" : "?" + encodedQuery))!

        let hash = payloadHash ?? PulseCrypto.SHA256.hex(body)
        var signed = headers + [("Host", host), ("x-amz-content-sha256", hash)]
        let signature = try signer.sign(
            SigV4.Request(method: method, path: path, query: query, headers: signed, payloadHash: hash), date: Date())
        signed += signature.addedHeaders

        var request = URLRequest(url: url)
        request.httpMethod = method
        for (name, value) in signed where name != "Host" { request.setValue(value, forHTTPHeaderField: name) }
        request.setValue(signature.authorization, forHTTPHeaderField: "Authorization")
        if method == "PUT" { request.httpBody = body }
        return request
    }

    /// One line for a failed response, naming the bucket or object; never echoes credentials.
    func error(for response: HTTPResponse, key: String) -> OpsError {
        let body = S3ErrorBody(response.body)
        let code = body.code ?? "HTTP \(response.status)"
        switch (response.status, body.code) {
        case (_, "NoSuchBucket"):
            return OpsError(.failure, name(""), "no such bucket at \(endpoint.absoluteString)")
        case (_, "SignatureDoesNotMatch"):
            return OpsError(.failure, name(key), "access denied: SignatureDoesNotMatch (is the secret access key right?)")
        case (_, "InvalidAccessKeyId"):
            return OpsError(.failure, name(key), "access denied: InvalidAccessKeyId (the access key id \(signer.credentials.accessKeyId) is unknown)")
        case (403, _):
            return OpsError(.failure, name(key), "access denied (\(code)): wrong credentials or missing permission")
        default:
            let detail = body.message.map { ": \($0)" } ?? ""
            return OpsError(.failure, name(key), "\(code)\(detail)")
        }
    }

    /// A transport failure as one line: the endpoint when it cannot be reached at all, else the object
    /// whose request failed.
    func transportError(_ error: any Error, object: String, suffix: String) -> OpsError {
        let code = (error as NSError).code
        switch code {
        case NSURLErrorCannotConnectToHost, NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed:
            return OpsError(.failure, endpoint.absoluteString, "cannot reach the S3 endpoint (\(Self.describe(error)))\(suffix)")
        case NSURLErrorTimedOut:
            return OpsError(.failure, object, "timed out: no progress for \(Int(http.timeout)) s from \(endpoint.absoluteString)\(suffix)")
        default:
            return OpsError(.failure, object, "\(Self.describe(error)) (\(endpoint.absoluteString))\(suffix)")
        }
    }

    /// A URL error in a few words of our own, never Foundation's "The operation could not be completed".
    static func describe(_ error: any Error) -> String {
        let error = error as NSError
        switch error.code {
        case NSURLErrorCannotConnectToHost: return "connection refused"
        case NSURLErrorTimedOut: return "timed out"
        case NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed: return "unknown host"
        case NSURLErrorNetworkConnectionLost: return "connection lost: reset by the server or a proxy"
        case NSURLErrorNotConnectedToInternet: return "no network"
        case NSURLErrorSecureConnectionFailed, NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasBadDate,
             NSURLErrorServerCertificateHasUnknownRoot, NSURLErrorServerCertificateNotYetValid:
            return "TLS connection failed (certificate?)"
        case NSURLErrorBadServerResponse: return "a malformed HTTP answer"
        default:
            return error.domain == NSURLErrorDomain ? "network error \(error.code)" : "\(error.domain) error \(error.code)"
        }
    }

    static func isMD5ETag(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
