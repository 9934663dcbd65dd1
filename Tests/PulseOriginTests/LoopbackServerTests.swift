import Foundation
import PulseCrypto
import PulseHTTPServer
import PulseSystem
import PulseTestSupport
import Testing
@testable import PulseOrigin

/// The real server on a loopback port, spoken to with raw HTTP/1.1 over sockets.
final class RunningOrigin {
    let package: TestPackage
    let server: HTTPServer
    let origin: Origin
    let logPath: String

    init(_ package: TestPackage, configure: (inout HTTPServer.Configuration) -> Void = { _ in },
         origin configureOrigin: (inout OriginConfiguration) -> Void = { _ in }, alarms: AlarmLog = AlarmLog(),
         willHash: (@Sendable () -> Void)? = nil) throws {
        self.package = package
        logPath = package.publicRoot.appendingPathComponent("access.log").path
        var configuration = OriginConfiguration(packageRoot: package.publicRoot)
        configureOrigin(&configuration)
        origin = try Origin(
            configuration: configuration, accessLog: try AccessLog.file(logPath), alarm: { alarms.append($0) }, willHash: willHash)
        var serverConfiguration = HTTPServer.Configuration()
        serverConfiguration.listen = "127.0.0.1:0"
        serverConfiguration.threads = 2
        serverConfiguration.requestHeaders = Origin.requestHeaders
        configure(&serverConfiguration)
        server = try HTTPServer(configuration: serverConfiguration, responder: origin)
    }

    deinit { server.stop() }

    /// A raw connection to the origin, from the loopback address `source` if given.
    func client(timeout: Double = 10, source: String? = nil) throws -> RawHTTPConnection {
        try RawHTTPConnection(host: "127.0.0.1", port: Int(server.port), timeout: timeout, source: source)
    }

    var accessLog: [String] {
        (try? String(contentsOfFile: logPath, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
    }

    /// The access log once it has `count` lines (or after two seconds). libmicrohttpd calls the completion
    /// hook that writes a line only after the last byte went out, so a client can hold the response first.
    func accessLog(lines count: Int) -> [String] {
        let deadline = Date().addingTimeInterval(2)
        var lines = accessLog
        while lines.count < count && Date() < deadline {
            usleep(5_000)
            lines = accessLog
        }
        return lines
    }
}

@Suite(.serialized) struct LoopbackServerTests {
    @Test func headersAndBodiesOverKeepAlive() throws {
        let package = try TestPackage.publicPart()
        let bytes = TestPackage.randomBytes(200_000)
        let hash = try package.addBlob(bytes)
        let running = try RunningOrigin(package)
        let client = try running.client()
        let path = "/api/sync/asset/\(hash)"

        let ok = try client.request("GET", path)
        #expect(ok.status == 200)
        #expect(ok.body == bytes)
        #expect(ok.header("Content-Length") == "200000")
        #expect(ok.header("Content-Type") == "application/octet-stream")
        #expect(ok.header("Cache-Control") == "public, max-age=31536000, immutable")
        #expect(ok.header("ETag") == "\"\(hash)\"")
        #expect(ok.header("Accept-Ranges") == "bytes")
        #expect(ok.header("Repr-Digest") == "sha-256=:\(Data(SHA256.hash(bytes)).base64EncodedString()):")
        #expect(ok.header("X-Content-Type-Options") == "nosniff")
        #expect(ok.header("Access-Control-Allow-Origin") == "*")

        // Same connection: HEAD, 304, 206, 416, 405, 404 and a path trick, then a GET again.
        let head = try client.request("HEAD", path)
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == "200000")
        #expect(head.body.isEmpty)
        let notModified = try client.request("GET", path, [("If-None-Match", "\"\(hash)\"")])
        #expect(notModified.status == 304)
        #expect(notModified.header("ETag") == "\"\(hash)\"")
        #expect(notModified.header("Cache-Control") == "public, max-age=31536000, immutable")
        let partial = try client.request("GET", path, [("Range", "bytes=100-199")])
        #expect(partial.status == 206)
        #expect(partial.header("Content-Range") == "bytes 100-199/200000")
        #expect(partial.body == Array(bytes[100...199]))
        let unsatisfiable = try client.request("GET", path, [("Range", "bytes=200000-")])
        #expect(unsatisfiable.status == 416)
        #expect(unsatisfiable.header("Content-Range") == "bytes */200000")
        let post = try client.request("POST", path, [("Content-Length", "0")])
        #expect(post.status == 405)
        #expect(post.header("Allow") == "GET, HEAD, OPTIONS")
        let missing = try client.request("GET", "/api/sync/asset/\(SHA256.hex([1]))")
        #expect(missing.status == 404)
        #expect(missing.header("Cache-Control") == "no-store")
        let again = try client.request("GET", path)
        #expect(again.status == 200)
        #expect(again.body == bytes)

        // One connection served all of them, and each request has its log line.
        let lines = running.accessLog(lines: 8)
        #expect(lines.count == 8)
        #expect(lines.first?.contains("GET \(path) 200 200000") == true)
        #expect(lines.first?.hasSuffix("verified") == true)
        #expect(lines.last?.hasSuffix("memory") == true)
    }

    @Test func pathTricksOverTheWire() throws {
        let package = try TestPackage.publicPart()
        let hash = try package.addBlob([1, 2, 3])
        let running = try RunningOrigin(package)
        let client = try running.client()
        for trick in [
            "/api/sync/asset/../index.json", "/api/sync/asset/%2e%2e/index.json", "/api/sync/asset/%2e%2e%2findex.json",
            "/api/sync/asset/\(hash.uppercased())", "/api/sync/asset/\(hash.dropLast())", "/api/sync/asset/\(hash)a",
            "/api/sync/asset/\(hash)/", "/api/sync/asset/\(hash)?v=2", "/api/sync/asset/%\(hash.dropFirst(2))%61",
        ] {
            let response = try client.request("GET", trick)
            #expect(response.status == 404, "\(trick)")
            #expect(response.header("Cache-Control") == "no-store", "\(trick)")
        }
        #expect(try client.request("GET", "/api/sync/asset/\(hash)").body == [1, 2, 3])
    }

    @Test func bitFlippedBlobGets500OverTheWire() throws {
        let package = try TestPackage.publicPart()
        let hash = try package.addBlob(TestPackage.randomBytes(10_000))
        try package.flipBit(hash, at: 5000)
        let running = try RunningOrigin(package)
        let client = try running.client()
        for _ in 0..<3 {
            let response = try client.request("GET", "/api/sync/asset/\(hash)")
            #expect(response.status == 500)
            #expect(response.header("Cache-Control") == "no-store")
        }
        let lines = running.accessLog(lines: 3)
        #expect(lines.count == 3)
        #expect(lines.allSatisfy { $0.hasSuffix("corrupt") })
    }

    @Test func blobPushedAfterStartIsServed() throws {
        let package = try TestPackage.publicPart()
        let running = try RunningOrigin(package)
        let client = try running.client()
        let bytes = TestPackage.randomBytes(1000)
        let hash = SHA256.hex(bytes)
        #expect(try client.request("GET", "/api/sync/asset/\(hash)").status == 404)
        try package.addBlob(bytes)
        let response = try client.request("GET", "/api/sync/asset/\(hash)")
        #expect(response.status == 200)
        #expect(response.body == bytes)
    }

    @Test func appconfigOverTheWire() throws {
        let package = try TestPackage.publicPart()
        let version = try package.addAppConfig("acme", json: #"{"org":"acme","productName":"Acme"}"#)
        let running = try RunningOrigin(package)
        let client = try running.client()
        let ok = try client.request("GET", "/api/sync/appconfig?org=acme")
        #expect(ok.status == 200)
        #expect(ok.body == Array(#"{"org":"acme","productName":"Acme"}"#.utf8))
        #expect(ok.header("ETag") == "\"\(version)\"")
        #expect(try client.request("GET", "/api/sync/appconfig?org=acme", [("If-None-Match", "\"\(version)\"")]).status == 304)
        #expect(try client.request("GET", "/api/sync/appconfig?org=nobody").status == 404)
        #expect(try client.request("GET", "/healthz").status == 200)
    }

    @Test func slowClientsDoNotStarveOthers() throws {
        let package = try TestPackage.publicPart()
        let hash = try package.addBlob([7])
        let running = try RunningOrigin(package, configure: { $0.idleTimeoutSeconds = 3; $0.maxConnectionsPerIP = 0 })
        // 40 slowloris connections: a request line and half a header, then silence.
        var slow: [RawHTTPConnection] = []
        for _ in 0..<40 {
            let client = try running.client(timeout: 10)
            try client.send("GET /api/sync/asset/\(hash) HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            slow.append(client)
        }
        let start = Date()
        let response = try running.client().request("GET", "/api/sync/asset/\(hash)")
        #expect(response.status == 200)
        // Well before the slow ones time out (3 s): nobody waited for them.
        #expect(Date().timeIntervalSince(start) < 1.5)
        // The silent ones are closed by the idle timeout.
        #expect(slow.allSatisfy { $0.isClosedByPeer() })
    }

    /// `--max-connections-per-ip`: one more connection from the address gets an answer it can act on (503,
    /// `Retry-After`, `Connection: close`), not a silent close; other addresses are served.
    @Test func perIPConnectionLimit() throws {
        let package = try TestPackage.publicPart()
        let hash = try package.addBlob([7])
        let running = try RunningOrigin(package, configure: { $0.maxConnectionsPerIP = 3 })
        let held = try (0..<3).map { _ in try running.client() }
        for client in held { #expect(try client.request("GET", "/api/sync/asset/\(hash)").status == 200) }
        let refused = try running.client(timeout: 2).request("GET", "/api/sync/asset/\(hash)")
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") == "1")
        #expect(refused.header("Connection") == "close")
        #expect(refused.header("Cache-Control") == "no-store")
        #expect(try running.client(source: "127.0.0.2").request("GET", "/api/sync/asset/\(hash)").status == 200)
        for client in held { #expect(try client.request("GET", "/api/sync/asset/\(hash)").status == 200) }
    }

    @Test func oversizedHeadersAreRefused() throws {
        let package = try TestPackage.publicPart()
        let hash = try package.addBlob([7])
        let running = try RunningOrigin(package)  // default 8 KB per connection
        // About 6 KB of headers (a CDN adding its own) still fits.
        let fits = try running.client().request("GET", "/api/sync/asset/\(hash)", [("X-Pad", String(repeating: "p", count: 6000))])
        #expect(fits.status == 200)
        let client = try running.client()
        try client.send("GET /api/sync/asset/\(hash) HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 20_000))\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 431 || response.status == 413 || response.status == 414)
        #expect(try running.client().request("GET", "/api/sync/asset/\(hash)").status == 200)
    }

    @Test func addressInUseIsAClearError() throws {
        let package = try TestPackage.publicPart()
        let running = try RunningOrigin(package)
        var configuration = HTTPServer.Configuration()
        configuration.listen = "127.0.0.1:\(running.server.port)"
        #expect(throws: HTTPServerError.addressInUse("127.0.0.1:\(running.server.port)")) {
            try HTTPServer(configuration: configuration, responder: running.origin)
        }
        configuration.listen = "nonsense"
        #expect(throws: HTTPServerError.badAddress("nonsense")) { try HTTPServer(configuration: configuration, responder: running.origin) }
    }

    @Test func stopReleasesThePort() throws {
        let package = try TestPackage.publicPart()
        let running = try RunningOrigin(package)
        let port = running.server.port
        running.server.stop()
        var configuration = HTTPServer.Configuration()
        configuration.listen = "127.0.0.1:\(port)"
        configuration.requestHeaders = Origin.requestHeaders
        let again = try HTTPServer(configuration: configuration, responder: running.origin)
        #expect(try RawHTTPConnection(host: "127.0.0.1", port: Int(port)).request("GET", "/healthz").status == 200)
        again.shutdown(drainSeconds: 1)
        #expect(throws: (any Error).self) { try RawHTTPConnection(host: "127.0.0.1", port: Int(port), timeout: 1).request("GET", "/healthz") }
    }

    @Test func gracefulShutdownFinishesResponsesInFlight() throws {
        let package = try TestPackage.publicPart()
        // 48 MB: more than the socket buffers hold, so the response is still being sent when shutdown starts.
        let chunk = TestPackage.randomBytes(1 << 20)
        let bytes = (0..<48).flatMap { index in chunk.map { $0 &+ UInt8(index) } }
        let hash = try package.addBlob(bytes)
        let running = try RunningOrigin(package)
        let client = try running.client()
        try client.send("GET /api/sync/asset/\(hash) HTTP/1.1\r\nHost: x\r\n\r\n")
        let head = try client.readHead()
        #expect(head.status == 200)
        Thread.sleep(forTimeInterval: 0.2)
        #expect(running.server.requestsInFlight == 1)
        let server = running.server
        let stopping = Thread { server.shutdown(drainSeconds: 20) }
        stopping.start()
        Thread.sleep(forTimeInterval: 0.3)
        #expect(throws: (any Error).self) { try running.client(timeout: 1).request("GET", "/healthz") }
        var body: [UInt8] = []
        try client.readBody(of: head) { body += $0 }
        #expect(body == bytes)
    }
}
