import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import PulseOps
@testable import PulseOpsCLI

/// The fault-injecting loopback proxy (Tests/Fixtures/fault-proxy.py) between pulse-pack and moto: drops,
/// cuts or resets uploads, truncates listings, answers 404 or empty 200s, stalls, ignores conditions, and
/// logs every request (to count them). One per test; a shell watchdog kills it if the test process dies.
final class FaultProxy: Sendable {
    let endpoint: URL
    let pid: Int32

    static let script = Fixtures.folder.appendingPathComponent("fault-proxy.py")

    /// A rule: `fault` for requests whose method is `method` and whose target (path and query) matches
    /// the regular expression `match`; after `skip` matching requests, for `times` of them (nil: all).
    struct Rule {
        var method: String
        var match: String
        var fault: String
        var times: Int?
        var skip = 0

        var json: [String: Any] {
            var object: [String: Any] = ["method": method, "match": match, "fault": fault, "skip": skip]
            if let times { object["times"] = times }
            return object
        }
    }

    /// One request the proxy saw.
    struct Entry {
        var method: String
        var target: String
        var fault: String?
        var headers: [String: String]
    }

    init(upstream: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", """
            python3 "$1" "$2" & proxy=$!
            while [ "$(cut -d' ' -f4 /proc/$$/stat)" = "$3" ] && kill -0 $proxy 2>/dev/null; do sleep 1; done
            kill -9 $proxy 2>/dev/null
            """, "fault-proxy-watchdog", Self.script.path, "\(upstream.port!)", "\(getpid())"]
        let output = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        while !text.contains("\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let fields = text.split(whereSeparator: \.isWhitespace).compactMap { Int32($0) }
        guard fields.count == 2 else { throw OpsError(.failure, Self.script.path, "the fault proxy did not start: \(text)") }
        endpoint = URL(string: "http://127.0.0.1:\(fields[0])")!
        pid = fields[1]
    }

    /// SIGKILL: children of the test process inherit a mask that blocks SIGTERM.
    func stop() { kill(pid, SIGKILL) }

    private func control(_ path: String, body: Data? = nil) throws -> Data {
        var request = URLRequest(url: endpoint.appendingPathComponent(path))
        request.httpMethod = body == nil ? "GET" : "POST"
        request.httpBody = body
        let response = try HTTPClient(timeout: 10).send(request)
        guard response.status == 200 else { throw OpsError(.failure, path, "fault proxy answered \(response.status)") }
        return response.body
    }

    /// Replaces the rules.
    func inject(_ rules: [Rule]) throws {
        _ = try control("__proxy/faults", body: try JSONSerialization.data(withJSONObject: rules.map(\.json)))
    }

    /// Clears rules and log.
    func clear() throws { _ = try control("__proxy/clear", body: Data()) }

    /// Every request since the last `clear()`.
    func log() throws -> [Entry] {
        let list = try JSONSerialization.jsonObject(with: try control("__proxy/log")) as! [[String: Any]]
        return list.map {
            Entry(method: $0["method"] as! String, target: $0["target"] as! String, fault: $0["fault"] as? String,
                  headers: $0["headers"] as? [String: String] ?? [:])
        }
    }
}

/// A moto bucket reached through a fault proxy, as a target and as CLI arguments.
struct ProxiedS3 {
    let moto: MotoServer
    let proxy: FaultProxy
    let bucket: String
    /// The bucket's target through the proxy.
    let target: S3Target
    /// The same bucket straight at moto: what is really stored.
    let direct: S3Target
    let location: String
    let options: [String]
    let variables: [String: String]

    init(retries: Int = 2, timeout: TimeInterval = 10) throws {
        moto = try MotoServer.require()
        proxy = try FaultProxy(upstream: moto.endpoint)
        bucket = try moto.makeBucket()
        let client = S3Client(endpoint: proxy.endpoint, region: "us-east-1", bucket: bucket, credentials: moto.credentials,
                              retries: retries, timeout: timeout)
        target = S3Target(client: client, prefix: "live/pulse")
        direct = S3Target(client: moto.client(bucket: bucket), prefix: "live/pulse")
        location = "s3://\(bucket)/live/pulse"
        options = ["--endpoint", proxy.endpoint.absoluteString, "--region", "us-east-1", "--retries", "\(retries)"]
        variables = ["AWS_ACCESS_KEY_ID": moto.credentials.accessKeyId, "AWS_SECRET_ACCESS_KEY": moto.credentials.secretAccessKey]
    }

    /// Every path stored, as moto has it.
    func paths() throws -> Set<String> { Set(try direct.list(under: "").map(\.path)) }
}
