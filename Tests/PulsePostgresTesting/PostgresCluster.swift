import Foundation
import PulsePostgres
import Synchronization

/// A throwaway PostgreSQL server for tests: `initdb` in a temporary folder, started on a free port
/// (TCP on 127.0.0.1 and a Unix socket in the folder), stopped and removed by `destroy()`.
///
/// PostgreSQL refuses to run as root; when the tests run as root the server runs as the `postgres`
/// user the Debian package creates (`runuser -u postgres --`), otherwise as the current user. The
/// bootstrap superuser is `postgres` (trusted over the socket only); `applicationRole` is an ordinary
/// role with a password (SCRAM over TCP and the socket) that owns each test database, as a server's
/// role would own its database in production.
///
/// `PostgresCluster.shared()` is one cluster per test process, created on first use and destroyed
/// when the process exits; a watcher process (started detached) destroys it too if the test
/// process dies without exiting (a crash, `kill -9`).
public final class PostgresCluster: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// Settings written to `postgresql.conf` besides port and socket folder.
    public struct Options: Sendable {
        /// Off by default: a test cluster need not survive a power cut, and fsync would make every
        /// `CREATE DATABASE` and commit wait for a disk shared with other builds. Turn it on for figures.
        public var durable = false
        public var maxConnections = 400
        public var extra: [String: String] = [:]

        public init() {}
    }

    public static let applicationRole = "pulse_app"

    /// The temporary folder: `data/` (the cluster), the socket, `server.log`.
    public let folder: URL
    /// The TCP port on 127.0.0.1 (also the socket's name, `.s.PGSQL.<port>`).
    public var port: Int { state.withLock { $0.port } }
    /// The application role's password (random per cluster).
    public let applicationPassword: String
    private let binaries: URL
    private let runAs: String?
    private let state = Mutex<(port: Int, running: Bool)>((0, false))

    public var dataFolder: URL { folder.appendingPathComponent("data") }
    public var socketFolder: String { folder.path }
    public var logFile: URL { folder.appendingPathComponent("server.log") }

    /// Creates and starts a cluster.
    /// - Throws: `Failure` saying to run Scripts/bootstrap when PostgreSQL is not installed, or what failed.
    public init(options: Options = Options()) throws {
        binaries = try Self.findBinaries()
        runAs = geteuid() == 0 ? "postgres" : nil
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("pulse-postgres-\(UUID().uuidString.prefix(8))")
        applicationPassword = UUID().uuidString
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        do {
            if let runAs { try Self.run(["/bin/chown", runAs, folder.path]) }
            try runServerTool("initdb", ["-D", dataFolder.path, "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync", "--auth=trust"])
            try configure(options)
            try startOnFreePort()
            try createApplicationRole()
        } catch {
            destroy()
            throw error
        }
    }

    deinit { destroy() }

    // MARK: - Lifetime

    /// Starts the server (after `stop`); waits until it accepts connections.
    public func start() throws {
        // The server outlives pg_ctl: it must not inherit the socket Foundation's Process watches to
        // learn that its child exited, or `run` would wait for the server to stop.
        try runServerTool("pg_ctl", ["-D", dataFolder.path, "-l", logFile.path, "-w", "-t", "60", "-o", "-p \(port)", "start"], closingDescriptors: true)
        state.withLock { $0.running = true }
    }

    /// Stops the server (`fast`: open transactions are rolled back, clients are disconnected).
    public func stop(mode: String = "fast") throws {
        try runServerTool("pg_ctl", ["-D", dataFolder.path, "-w", "-t", "60", "-m", mode, "stop"])
        state.withLock { $0.running = false }
    }

    /// Stops the server if it runs and removes the folder. Idempotent.
    public func destroy() {
        if state.withLock({ $0.running }) { try? stop(mode: "immediate") }
        try? FileManager.default.removeItem(at: folder)
    }

    // MARK: - Databases

    /// The superuser over the Unix socket (trust): for creating and dropping databases.
    public func superuser(database: String = "postgres") throws -> PostgresConfiguration {
        try PostgresConfiguration("postgresql://postgres@/\(database)?host=\(socketFolder)&port=\(port)")
    }

    /// A URL for the application role over TCP, password included.
    public func url(database: String) -> String {
        "postgresql://\(Self.applicationRole):\(applicationPassword)@127.0.0.1:\(port)/\(database)?sslmode=disable"
    }

    /// A new, empty database owned by the application role. It lives as long as the cluster: a storage
    /// opened on it may well outlive the returned value (tests often keep only the storage).
    public func createDatabase(_ prefix: String = "test") throws -> TestDatabase {
        let name = "\(prefix.lowercased().filter { $0.isLetter || $0.isNumber }.prefix(20))_\(UUID().uuidString.prefix(8).lowercased())"
        let admin = try PostgresConnection(try superuser())
        try admin.execute("CREATE DATABASE \"\(name)\" OWNER \(Self.applicationRole)")
        return TestDatabase(cluster: self, name: name, configuration: try PostgresConfiguration(url(database: name)))
    }

    // MARK: - Setup

    private func configure(_ options: Options) throws {
        var settings = [
            "listen_addresses": "'127.0.0.1'", "unix_socket_directories": "'\(socketFolder)'",
            "max_connections": "\(options.maxConnections)", "shared_buffers": "'32MB'",
            "fsync": options.durable ? "on" : "off", "synchronous_commit": options.durable ? "on" : "off",
            "full_page_writes": options.durable ? "on" : "off", "log_min_messages": "warning",
        ]
        settings.merge(options.extra) { $1 }
        let text = settings.sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value)\n" }.joined()
        let conf = dataFolder.appendingPathComponent("postgresql.conf")
        let handle = try FileHandle(forWritingTo: conf)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
        try handle.close()
        // The superuser is trusted over the socket only; everyone else gives a password (SCRAM).
        let hba = """
            local all postgres trust
            local all all scram-sha-256
            host all all 127.0.0.1/32 scram-sha-256

            """
        try Data(hba.utf8).write(to: dataFolder.appendingPathComponent("pg_hba.conf"))
        if let runAs { try Self.run(["/bin/chown", runAs, dataFolder.appendingPathComponent("pg_hba.conf").path]) }
    }

    /// Picks a free port and starts; tries again with another port if it was taken meanwhile.
    private func startOnFreePort() throws {
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = try Self.freePort()
            state.withLock { $0.port = port }
            do {
                try start()
                startWatcher()
                return
            } catch {
                lastError = error
            }
        }
        throw lastError ?? Failure("could not start PostgreSQL")
    }

    private func createApplicationRole() throws {
        let admin = try PostgresConnection(try superuser())
        // A literal, not a parameter: utility statements take none. The password is a UUID (no quotes).
        try admin.execute("CREATE ROLE \(Self.applicationRole) LOGIN PASSWORD '\(applicationPassword)'")
    }

    /// A detached process that destroys the cluster once this process is gone, however it ended.
    private func startWatcher() {
        let pgctl = binaries.appendingPathComponent("pg_ctl").path
        let stop = (runAs.map { ["/usr/sbin/runuser", "-u", $0, "--"] } ?? []) + [pgctl, "-D", dataFolder.path, "-m", "immediate", "stop"]
        let script = "tail --pid=\(getpid()) -f /dev/null; \(stop.joined(separator: " ")) >/dev/null 2>&1; rm -rf \(folder.path)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setsid")
        process.arguments = Self.closingDescriptors(["/bin/sh", "-c", script])
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
    }

    // MARK: - Processes

    /// Runs one of PostgreSQL's programs as the server's user.
    private func runServerTool(_ name: String, _ arguments: [String], closingDescriptors: Bool = false) throws {
        let tool = binaries.appendingPathComponent(name).path
        let command = (runAs.map { ["/usr/sbin/runuser", "-u", $0, "--"] } ?? []) + [tool] + arguments
        try Self.run(closingDescriptors ? Self.closingDescriptors(command) : command, cwd: folder)
    }

    /// `command` run through bash after closing every descriptor above 2, so that a process it leaves
    /// running holds none of ours (Foundation's Process passes its child one end of a socket pair and
    /// counts the child as running until every holder of that end has closed it).
    static func closingDescriptors(_ command: [String]) -> [String] {
        let script = #"for fd in /proc/$$/fd/*; do n=${fd##*/}; if [ "$n" -gt 2 ]; then eval "exec $n>&-"; fi; done; exec "$@""#
        return ["/bin/bash", "-c", script, "bash"] + command
    }

    /// Runs a program to completion; throws with its output when it fails.
    @discardableResult
    static func run(_ command: [String], cwd: URL? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        if let cwd { process.currentDirectoryURL = cwd }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw Failure("\(URL(fileURLWithPath: command[0]).lastPathComponent) \(command.dropFirst().prefix(3).joined(separator: " ")) failed (exit \(process.terminationStatus)): \(text.suffix(600))")
        }
        return text
    }

    /// The newest `<root>/<version>/bin` with `initdb` in it (Debian's layout).
    public static func findBinaries(root: URL = URL(fileURLWithPath: "/usr/lib/postgresql")) throws -> URL {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        let found = versions.compactMap { Int($0) }.sorted(by: >).map { root.appendingPathComponent("\($0)/bin") }
            .first { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("initdb").path) }
        guard let found else {
            throw Failure("PostgreSQL is not installed (no \(root.path)/*/bin/initdb): run Scripts/bootstrap, which installs the Debian packages postgresql and libpq-dev")
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser") || geteuid() != 0 else {
            throw Failure("the tests run as root and need /usr/sbin/runuser to start PostgreSQL as the postgres user")
        }
        return found
    }

    /// A TCP port nobody listens on now (the kernel's choice for port 0).
    static func freePort() throws -> Int {
        let text = try run(["/usr/bin/python3", "-c", "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"])
        guard let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { throw Failure("no free port: \(text)") }
        return port
    }

    // MARK: - One per process

    private static let sharedCluster = Mutex<Result<PostgresCluster, any Error>?>(nil)

    /// The cluster of this test process: started on first use, destroyed at exit.
    public static func shared() throws -> PostgresCluster {
        try sharedCluster.withLock { shared in
            if let shared { return try shared.get() }
            let result = Result { try PostgresCluster() }
            shared = result
            if case .success = result { atexit { PostgresCluster.destroyShared() } }
            return try result.get()
        }
    }

    private static func destroyShared() {
        if case let .success(cluster)? = sharedCluster.withLock({ $0 }) { cluster.destroy() }
    }
}

/// A database of a `PostgresCluster`, owned by the application role.
public final class TestDatabase: Sendable {
    public let cluster: PostgresCluster
    public let name: String
    /// The application role over TCP, with its password.
    public let configuration: PostgresConfiguration

    init(cluster: PostgresCluster, name: String, configuration: PostgresConfiguration) {
        self.cluster = cluster
        self.name = name
        self.configuration = configuration
    }

    /// The URL of `configuration`, password included (for command lines under test).
    public var url: String { cluster.url(database: name) }
}
