import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PulseCrypto
import Synchronization
import Testing
@testable import PulseOps
@testable import PulseOpsCLI

/// A real S3-compatible server (moto) on loopback, with SigV4 checking switched on.
///
/// Started once per test process on a port the OS picks. A small shell watchdog stops it (SIGKILL)
/// within a second of the test process ending, however it ends. (Children of the test process
/// inherit a signal mask that blocks SIGTERM, so only SIGKILL stops them.)
/// Setup while moto still accepts anything: an IAM user with an s3:* policy and an access key; then
/// `POST /moto-api/reset-auth 0` makes moto verify the signature (and the policy) of every request.
final class MotoServer: Sendable {
    let endpoint: URL
    let credentials: AWSCredentials
    let pid: Int32

    static let binary = Fixtures.packageRoot.appendingPathComponent(".build/tools/venv/bin/moto_server")

    /// The shared server, or why it could not start (then every S3 test fails with that reason).
    static let shared: Result<MotoServer, MotoError> = Result { try MotoServer() }.mapError { $0 as? MotoError ?? MotoError(message: "\($0)") }

    struct MotoError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// The shared server; records a test failure (not a skip) if moto is missing or does not start.
    static func require(sourceLocation: SourceLocation = #_sourceLocation) throws -> MotoServer {
        switch shared {
        case let .success(server): return server
        case let .failure(error):
            Issue.record("S3 tests need moto: \(error.message)", sourceLocation: sourceLocation)
            throw error
        }
    }

    private init() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary.path) else {
            throw MotoError(message: "\(Self.binary.path) is missing: run Scripts/bootstrap to install moto[server]")
        }
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("pulse-moto-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        // Watchdog: moto dies with us, even if we crash.
        process.arguments = ["-c", """
            "$1" -H 127.0.0.1 -p 0 >"$2" 2>&1 & moto=$!
            # Our parent is the test process until it exits (even as a zombie): then we are re-parented.
            while [ "$(cut -d' ' -f4 /proc/$$/stat)" = "$3" ] && kill -0 $moto 2>/dev/null; do sleep 1; done
            kill -9 $moto 2>/dev/null
            rm -f "$2"
            """, "moto-watchdog", Self.binary.path, log.path, "\(getpid())"]
        // Not the test's stdout/stderr: swift test waits for those pipes to close.
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        pid = process.processIdentifier

        var port: Int?
        let deadline = Date().addingTimeInterval(60)
        while port == nil, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.2)
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if let range = text.range(of: #"Running on http://127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                port = Int(text[range].split(separator: ":").last!)
            }
        }
        guard let port else {
            // The watchdog stops moto when this test process ends.
            throw MotoError(message: "moto did not start within 60 s (log: \(log.path))")
        }
        endpoint = URL(string: "http://127.0.0.1:\(port)")!
        credentials = try Self.setUpAuthentication(endpoint)
    }

    /// Creates the IAM user and key while moto is open, then switches signature checking on.
    private static func setUpAuthentication(_ endpoint: URL) throws -> AWSCredentials {
        let anyone = AWSCredentials(accessKeyId: "AKIDSETUP", secretAccessKey: "setup")
        func iam(_ form: String) throws -> String {
            let response = try signedRequest(endpoint, method: "POST", path: "/", service: "iam", credentials: anyone,
                                             body: Data((form + "&Version=2010-05-08").utf8),
                                             contentType: "application/x-www-form-urlencoded")
            let text = String(decoding: response.body, as: UTF8.self)
            guard response.status == 200 else { throw MotoError(message: "moto IAM setup failed: \(response.status) \(text)") }
            return text
        }
        _ = try iam("Action=CreateUser&UserName=pulse-push")
        let policy = #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}"#
        _ = try iam("Action=PutUserPolicy&UserName=pulse-push&PolicyName=s3&PolicyDocument=" + SigV4.percentEncode(policy))
        let key = try iam("Action=CreateAccessKey&UserName=pulse-push")
        let answer = try? S3XML.parse(Data(key.utf8))
        guard let id = answer?.find("AccessKeyId")?.text, let secret = answer?.find("SecretAccessKey")?.text else {
            throw MotoError(message: "moto CreateAccessKey returned no key")
        }
        var request = URLRequest(url: endpoint.appendingPathComponent("moto-api/reset-auth"))
        request.httpMethod = "POST"
        request.httpBody = Data("0".utf8)
        request.setValue("text/plain", forHTTPHeaderField: "Content-Type")  // not a form, or Flask eats the body
        let reset = try HTTPClient(timeout: 10).send(request)
        guard reset.status == 200 else { throw MotoError(message: "moto reset-auth failed: \(reset.status)") }
        return AWSCredentials(accessKeyId: id, secretAccessKey: secret)
    }

    static func signedRequest(
        _ endpoint: URL, method: String, path: String, service: String, credentials: AWSCredentials,
        body: Data = Data(), contentType: String? = nil
    ) throws -> HTTPResponse {
        let host = "\(endpoint.host!):\(endpoint.port!)"
        let hash = PulseCrypto.SHA256.hex(body)
        var headers: [(name: String, value: String)] = [("Host", host), ("x-amz-content-sha256", hash)]
        if let contentType { headers.append(("Content-Type", contentType)) }
        let signature = try SigV4(credentials: credentials, region: "us-east-1", service: service, normalizePath: service != "s3")
            .sign(SigV4.Request(method: method, path: path, headers: headers, payloadHash: hash), date: Date())
        var request = URLRequest(url: URL(string: endpoint.absoluteString + path)!)
        request.httpMethod = method
        for (name, value) in headers + signature.addedHeaders where name != "Host" { request.setValue(value, forHTTPHeaderField: name) }
        request.setValue(signature.authorization, forHTTPHeaderField: "Authorization")
        if !body.isEmpty { request.httpBody = body }
        return try HTTPClient(timeout: 10).send(request)
    }

    /// A new empty bucket, created with the IAM user's (checked) credentials.
    func makeBucket() throws -> String {
        let bucket = "pulse-\(UUID().uuidString.lowercased().prefix(13))"
        let response = try Self.signedRequest(endpoint, method: "PUT", path: "/\(bucket)", service: "s3", credentials: credentials)
        guard response.status == 200 else {
            throw MotoError(message: "CreateBucket \(bucket): \(response.status) \(String(decoding: response.body, as: UTF8.self))")
        }
        return bucket
    }

    func client(bucket: String, credentials: AWSCredentials? = nil, retries: Int = 2) -> S3Client {
        S3Client(endpoint: endpoint, region: "us-east-1", bucket: bucket, credentials: credentials ?? self.credentials, retries: retries, timeout: 10)
    }
}
