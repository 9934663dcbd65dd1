import Foundation
import PulseCrypto
import PulsePostgresTesting
import PulseServer
import PulseServerStorage
@testable import PulseServerCLI
import PulseCommandLine
import PulseSystem
import PulseTestSupport
import SyncTestSupport
import Testing

/// pulse-server as operators run several: `count` real `serve` processes on one PostgreSQL database, started
/// together, behind a real nginx whose `upstream` holds them all (round robin), configured as docs/server.md
/// says (`NginxProxy.configuration`).
final class InstanceFleet: @unchecked Sendable {
    let database: TestDatabase
    let folder: TestFolder
    let servers: [ServerProcess]
    let nginx: NginxProxy
    /// `PULSE_DATABASE_URL` for the servers and the CLI.
    var environment: [String: String] { [ServerCommand.databaseVariable: database.url] }

    /// - Parameters:
    ///   - dataFolders: per server, a data folder to pass as `--data` (nil: none), e.g. to hold a key to adopt.
    ///   - arguments: added to every `serve`.
    init(
        _ database: TestDatabase, count: Int, dataFolders: [String?]? = nil, arguments: [String] = [], name: String = #function
    ) throws {
        self.database = database
        folder = try TestFolder(name)
        let environment = [ServerCommand.databaseVariable: database.url]
        let started = Servers()
        let logs = folder.url
        DispatchQueue.concurrentPerform(iterations: count) { n in
            started.set(n, Result {
                try ServerProcess(
                    data: dataFolders?[n],
                    ["--access-log", logs.appendingPathComponent("access-\(n).log").path, "--trusted-proxy", "127.0.0.1", "--threads", "2"]
                        + arguments,
                    environment: environment)
            })
        }
        servers = try (0..<count).map { try started.get($0) }
        nginx = try NginxProxy(upstreams: servers.map(\.port), folder: folder.url.appendingPathComponent("nginx"))
    }

    /// A client of nginx, from `source` (a loopback address such as 127.0.0.7) if given.
    func client(source: String? = nil, timeout: Double = 10) throws -> RawHTTPConnection {
        try RawHTTPConnection(host: "127.0.0.1", port: Int(nginx.port), timeout: timeout, source: source)
    }

    /// A client of server `n` itself, not through nginx.
    func direct(_ n: Int, timeout: Double = 10) throws -> RawHTTPConnection { try servers[n].client(timeout: timeout) }

    /// Server `n`'s access log lines (written once each response is out).
    func accessLog(_ n: Int) -> [String] {
        let text = (try? String(contentsOf: folder.url.appendingPathComponent("access-\(n).log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    /// How many requests for targets starting with `prefix` each server logged.
    func spread(_ prefix: String) -> [Int] {
        servers.indices.map { n in accessLog(n).filter { $0.contains(" \(prefix)") }.count }
    }

    /// `pulse-server <arguments>` in this process, on the fleet's database.
    func cli(_ arguments: [String]) -> CLI.Result { PostgresCommandTests.run(arguments, environment: environment) }

    /// Imports a package with `sessions` (`slides` each), then sets their state.
    func seed(_ sessions: [String], slides: Int = 10, state: String = "live", series: String? = nil) throws {
        let package = try TestPackage(packageId: TestContent.packageAID)
        for id in sessions { try package.addSession(id, slides: slides, series: series) }
        if let series { try package.addSeries(series, sessions: sessions) }
        try package.commit()
        let imported = cli(["import", package.root.path])
        try #require(imported.code == 0, "\(imported.text)")
        for id in sessions { try #require(cli(["admin", "session", "set", id, "--state", state]).code == 0) }
    }

    func deviceCode(_ session: String) throws -> String {
        try #require(cli(["admin", "device-code", "create", "--session", session]).out.first)
    }

    func staffToken() throws -> String { try #require(cli(["admin", "staff-token", "create"]).out.first) }

    /// Enrolls a new device through nginx.
    func enroll(_ token: String, source: String? = nil) throws -> TestDevice {
        let key = try P256.PrivateKey()
        let response = try client(source: source).request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: token, key: key))
        guard response.status == 200, let id = response.json?["deviceId"]?.stringValue else {
            throw RawHTTPConnection.Failure("enroll answered \(response.status): \(response.text)")
        }
        return TestDevice(id: id, key: key)
    }

    /// Unix seconds now (the servers run on the real clock).
    static var now: Int64 { Int64(Date().timeIntervalSince1970) }
}

/// nginx in front of the servers: the `upstream` and proxy settings docs/server.md gives operators, on a
/// free loopback port, with all its files in `folder`.
final class NginxProxy: @unchecked Sendable {
    let port: UInt16
    let folder: URL
    private let process = Process()

    /// The http-level configuration: `upstream pulse` with every server, and the locations. Enroll is
    /// retried on another server after a connection error or timeout (`non_idempotent`: safe because an
    /// enrollment asked again gets the device it made); every other POST is not (nginx's default), GETs are.
    static func configuration(upstreams: [String]) -> String {
        """
        upstream pulse {
        \(upstreams.map { "    server \($0) max_fails=1 fail_timeout=10s;" }.joined(separator: "\n"))
            keepalive 32;
        }
        server {
            listen LISTEN;
            client_max_body_size 16k;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_connect_timeout 2s;
            proxy_next_upstream error timeout;
            location = /api/sync/enroll {
                proxy_pass http://pulse;
                proxy_next_upstream error timeout non_idempotent;
            }
            location = /api/sync/events {
                proxy_pass http://pulse;
                proxy_buffering off;
                proxy_read_timeout 1h;
            }
            location / {
                proxy_pass http://pulse;
            }
        }
        """
    }

    init(upstreams: [UInt16], folder: URL) throws {
        self.folder = folder
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("logs"), withIntermediateDirectories: true)
        port = try Self.freePort()
        let user = geteuid() == 0 ? "user root;\n" : ""
        let http = Self.configuration(upstreams: upstreams.map { "127.0.0.1:\($0)" })
            .replacingOccurrences(of: "listen LISTEN;", with: "listen 127.0.0.1:\(port) backlog=4096;")
        let text = """
            \(user)worker_processes 1;
            pid \(folder.path)/nginx.pid;
            error_log \(folder.path)/logs/error.log warn;
            events { worker_connections 8192; }
            http {
                access_log off;
                client_body_temp_path \(folder.path)/body;
                proxy_temp_path \(folder.path)/proxy;
                fastcgi_temp_path \(folder.path)/fastcgi;
                uwsgi_temp_path \(folder.path)/uwsgi;
                scgi_temp_path \(folder.path)/scgi;
            \(http)
            }

            """
        let configuration = folder.appendingPathComponent("nginx.conf")
        try Data(text.utf8).write(to: configuration)
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
        process.arguments = ["-p", folder.path, "-c", configuration.path, "-g", "daemon off;"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx"), "nginx is missing: run Scripts/bootstrap")
        try process.run()
        let port = self.port
        guard eventually(within: 10, { (try? RawHTTPConnection(host: "127.0.0.1", port: Int(port), timeout: 1)) != nil }) else {
            process.terminate()
            let log = (try? String(contentsOf: folder.appendingPathComponent("logs/error.log"), encoding: .utf8)) ?? ""
            throw RawHTTPConnection.Failure("nginx did not start: \(log)")
        }
    }

    deinit {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        if !eventually(within: 5, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// nginx's error log (upstream failures and retries are logged there).
    var errorLog: String { (try? String(contentsOf: folder.appendingPathComponent("logs/error.log"), encoding: .utf8)) ?? "" }

    /// A TCP port nobody listens on now (the kernel's choice for port 0).
    static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw RawHTTPConnection.Failure("no free port: \(String(cString: strerror(errno)))") }
        return UInt16(bigEndian: address.sin_port)
    }
}
