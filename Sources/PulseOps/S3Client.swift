import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PulseCrypto

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
/// retries with exponential backoff for transport errors, 5xx and throttling.
public final class S3Client: Sendable {
    public let endpoint: URL
    public let region: String
    public let bucket: String
    let signer: SigV4
    let retries: Int
    let http: HTTPClient

    /// - Parameters:
    ///   - retries: extra attempts after a failed one (transport error, 5xx, 429).
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

    /// The size of an object, or nil when there is none.
    public func head(_ key: String) throws -> Int? {
        let response = try send("HEAD", key: key, allow: [404])
        if response.status == 404 { return nil }
        return response.headers["content-length"].flatMap(Int.init) ?? 0
    }

    /// An object's bytes, or nil when there is none.
    public func get(_ key: String) throws -> Data? {
        let response = try send("GET", key: key, allow: [404])
        if response.status == 404 {
            if S3ErrorBody(response.body).code == "NoSuchBucket" { throw error(for: response, key: key) }
            return nil
        }
        return response.body
    }

    /// Uploads an object. S3 checks the body against `x-amz-checksum-sha256` (and the signed
    /// `x-amz-content-sha256`) and rejects a damaged upload.
    public func put(_ key: String, body: Data, contentType: String, cacheControl: String) throws {
        let digest = SHA256.hash(body)
        _ = try send("PUT", key: key, body: body, headers: [
            ("Content-Type", contentType),
            ("Cache-Control", cacheControl),
            ("x-amz-sdk-checksum-algorithm", "SHA256"),
            ("x-amz-checksum-sha256", Data(digest).base64EncodedString()),
        ], payloadHash: Hex.encode(digest))
    }

    /// Deletes an object (no error if it is already gone).
    public func delete(_ key: String) throws {
        _ = try send("DELETE", key: key, allow: [404])
    }

    /// Every object whose key starts with `prefix` (ListObjectsV2, all pages).
    public func list(prefix: String, maxKeys: Int = 1000) throws -> [TargetObject] {
        var objects: [TargetObject] = []
        var token: String?
        repeat {
            var query: [(name: String, value: String)] = [("list-type", "2"), ("prefix", prefix), ("max-keys", "\(maxKeys)")]
            if let token { query.append(("continuation-token", token)) }
            let response = try send("GET", key: "", query: query)
            let page = S3ListPage(response.body)
            objects += page.objects
            token = page.isTruncated ? page.nextToken : nil
        } while token != nil
        return objects
    }

    /// Checks that the bucket exists and the credentials work: one small listing.
    public func checkBucket() throws {
        _ = try send("GET", key: "", query: [("list-type", "2"), ("max-keys", "1")])
    }

    // MARK: - Requests

    func send(
        _ method: String, key: String, query: [(name: String, value: String)] = [], body: Data = Data(),
        headers: [(name: String, value: String)] = [], payloadHash: String? = nil, allow: Set<Int> = []
    ) throws -> HTTPResponse {
        var attempt = 0
        while true {
            do {
                let response = try http.send(request(method, key: key, query: query, body: body, headers: headers, payloadHash: payloadHash))
                if (200..<300).contains(response.status) || allow.contains(response.status) { return response }
                let retryable = response.status >= 500 || response.status == 429
                if !retryable || attempt >= retries { throw error(for: response, key: key) }
            } catch let error as OpsError {
                throw error
            } catch {
                if attempt >= retries {
                    throw OpsError(.failure, endpoint.absoluteString, "cannot reach the S3 endpoint (\(Self.describe(error)))")
                }
            }
            attempt += 1
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

        let hash = payloadHash ?? SHA256.hex(body)
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

    static func describe(_ error: any Error) -> String {
        let code = (error as NSError).code
        switch code {
        case NSURLErrorCannotConnectToHost: return "connection refused"
        case NSURLErrorTimedOut: return "timed out"
        case NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed: return "unknown host"
        case NSURLErrorNetworkConnectionLost: return "connection lost"
        default: return (error as NSError).localizedDescription
        }
    }
}
