import Foundation
import PulsePostgres
import PulsePostgresTesting
import PulseTestSupport
import Testing

/// URLs as libpq reads them, and a password that never reaches a message.
@Suite struct ConfigurationTests {
    @Test func aURLIsReadByLibpqAndPrintedWithoutItsPassword() throws {
        let configuration = try PostgresConfiguration("postgresql://pulse:s3cr%40t-pw@db.example.net:6432/event?sslmode=verify-full&sslrootcert=/etc/ca.pem")
        #expect(configuration["host"] == "db.example.net" && configuration["port"] == "6432" && configuration["dbname"] == "event")
        #expect(configuration["password"] == "s3cr@t-pw" && configuration["sslmode"] == "verify-full")
        #expect(configuration.redacted == "postgresql://pulse:***@db.example.net:6432/event?sslmode=verify-full")
        #expect("\(configuration)" == configuration.redacted)
        let socket = try PostgresConfiguration("postgresql:///event?host=/run/postgresql")
        #expect(socket["host"] == "/run/postgresql" && socket.redacted == "postgresql://[/run/postgresql]/event")
    }

    @Test func aMalformedURLIsRefusedWithoutQuotingThePassword() throws {
        for text in ["postgresql://pulse:hunter2-secret@[::1/db", "postgresql://pulse:hunter2-secret@host/db?nosuchoption=1"] {
            let error = #expect(throws: PostgresError.self) { try PostgresConfiguration(text) }
            #expect(error?.kind == .configuration)
            #expect(error.map { "\($0)" }?.contains("hunter2") == false, "\(String(describing: error))")
        }
    }

    @Test func aWrongPasswordFailsToConnectWithoutPrintingIt() throws {
        let database = try PostgresCluster.shared().createDatabase()
        let wrong = database.configuration.setting("password", "wrong-password-123")
        let error = #expect(throws: PostgresError.self) { try PostgresConnection(wrong) }
        #expect(error?.kind == .unavailable)
        #expect(error?.message.contains("password authentication failed") == true)
        #expect(error.map { "\($0)" }?.contains("wrong-password-123") == false)
        #expect(error?.operation.contains(":***@") == true)
    }

    @Test func aUnixSocketURLConnects() throws {
        let cluster = try PostgresCluster.shared()
        let database = try cluster.createDatabase()
        let url = "postgresql://\(PostgresCluster.applicationRole):\(cluster.applicationPassword)@/\(database.name)?host=\(cluster.socketFolder)&port=\(cluster.port)"
        let connection = try PostgresConnection(try PostgresConfiguration(url))
        #expect(try connection.query("SELECT current_user::text, inet_server_addr() IS NULL").first.map { [try $0.string(0), "\(try $0.bool(1))"] }
            == [PostgresCluster.applicationRole, "true"])  // no server address: a socket
    }

    @Test func aPortLibpqRefusesAtConnectIsNotQuotedWithThePassword() throws {
        let configuration = try PostgresConfiguration("postgresql://pulse:hunter2-secret@127.0.0.1:notaport/db")
        let error = #expect(throws: PostgresError.self) { try PostgresConnection(configuration) }
        #expect(error?.message.contains("notaport") == true && error.map { "\($0)" }?.contains("hunter2") == false)
    }

    @Test func anUnreachableServerIsUnavailable() throws {
        let error = #expect(throws: PostgresError.self) {
            try PostgresConnection(try PostgresConfiguration("postgresql://pulse:pw@127.0.0.1:1/db?connect_timeout=2"))
        }
        #expect(error?.kind == .unavailable)
    }

    @Test func withoutPostgreSQLInstalledTheHarnessSaysToRunBootstrap() throws {
        let empty = try TestFolder()
        let error = #expect(throws: PostgresCluster.Failure.self) { try PostgresCluster.findBinaries(root: empty.url) }
        #expect(error?.description.contains("run Scripts/bootstrap") == true)
        #expect(try PostgresCluster.findBinaries().path.hasPrefix("/usr/lib/postgresql/"))
    }
}
