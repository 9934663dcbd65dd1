import Foundation
import Testing
@testable import PulseOps
@testable import PulseOpsCLI

/// Retries with backoff, against a tiny loopback server that answers 503 a few times, then 200.
@Suite(.serialized) struct RetryTests {
    /// Starts the flaky server; returns its endpoint and the process (the caller terminates it).
    func flakyServer(failures: Int) throws -> (URL, Process) {
        let script = """
            import http.server, sys
            fails = int(sys.argv[1])
            class H(http.server.BaseHTTPRequestHandler):
                count = 0
                def do_HEAD(self):
                    H.count += 1
                    self.send_response(503 if H.count <= fails else 200)
                    self.send_header('Content-Length', '0' if H.count <= fails else '42')
                    self.end_headers()
                def log_message(self, *args): pass
            server = http.server.HTTPServer(('127.0.0.1', 0), H)
            print(server.server_address[1], flush=True)
            server.serve_forever()
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, "\(failures)"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        while !text.contains("\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            stop(process)
            throw OpsError(.failure, "python3", "flaky test server did not start")
        }
        return (URL(string: "http://127.0.0.1:\(port)")!, process)
    }

    /// SIGKILL: children of the test process inherit a mask that blocks SIGTERM.
    func stop(_ process: Process) {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    @Test func transientServerErrorsAreRetriedWithBackoff() throws {
        let (endpoint, server) = try flakyServer(failures: 2)
        defer { stop(server) }
        let client = S3Client(endpoint: endpoint, region: "us-east-1", bucket: "b",
                              credentials: AWSCredentials(accessKeyId: "AKID", secretAccessKey: "s"), retries: 2, timeout: 5)
        let start = Date()
        #expect(try client.head("assets/x") == 42)
        // Two backoffs: at least 0.75 × (0.2 + 0.4) s.
        #expect(Date().timeIntervalSince(start) >= 0.45)
    }

    @Test func retriesRunOut() throws {
        let (endpoint, server) = try flakyServer(failures: 3)
        defer { stop(server) }
        let client = S3Client(endpoint: endpoint, region: "us-east-1", bucket: "b",
                              credentials: AWSCredentials(accessKeyId: "AKID", secretAccessKey: "s"), retries: 2, timeout: 5)
        #expect {
            _ = try client.head("assets/x")
        } throws: { error in
            (error as? OpsError)?.description == "s3://b/assets/x: HTTP 503 after 3 attempts"
        }
    }
}
