import CPostgres
import Foundation

/// One connection to a PostgreSQL server (a `PGconn`, finished in deinit). Not shareable: use it from
/// one thread at a time (a `PostgresPool` hands each caller its own), as libpq asks.
///
/// Statements run with parameters only (`$1`, `$2`, …), prepared once per connection under a name
/// and executed by name afterwards (`PQprepare`, then `PQexecPrepared`): the server parses and plans
/// each statement once per connection, and a statement costs one round trip. `execute` (no
/// parameters, several statements allowed) is for DDL and transaction control.
///
/// Connections are opened with `client_encoding=UTF8`, a 10 s `connect_timeout` and TCP keepalives
/// (a dead peer is noticed within about half a minute instead of never) unless the configuration
/// sets them; server notices (`NOTICE: … already exists, skipping`) are dropped, not printed.
public final class PostgresConnection {
    let pointer: OpaquePointer
    public let configuration: PostgresConfiguration
    private let counter: RoundTripCounter?
    /// SQL text → the name it was prepared under on this connection (cleared by `reset`).
    private var prepared: [String: String] = [:]

    /// Opens a connection.
    /// - Parameter counter: counts this connection's round trips (a pool passes its own).
    /// - Throws: `PostgresError(.unavailable)` with libpq's reason (the password scrubbed from it).
    public init(_ configuration: PostgresConfiguration, counter: RoundTripCounter? = nil) throws(PostgresError) {
        let settings = configuration.setting("client_encoding", "UTF8")
            .defaulting("connect_timeout", "10")
            .defaulting("keepalives", "1").defaulting("keepalives_idle", "10")
            .defaulting("keepalives_interval", "5").defaulting("keepalives_count", "3")
        let keywords = settings.parameters.map(\.keyword)
        let values = settings.parameters.map(\.value)
        let connection = Self.withCStrings(keywords) { keywords in
            Self.withCStrings(values) { values in PQconnectdbParams(keywords, values, 0) }
        }
        guard let connection else {
            throw PostgresError(.unavailable, message: "out of memory", operation: "connect to \(configuration.redacted)")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = PostgresConfiguration.oneLine(String(cString: PQerrorMessage(connection)))
            PQfinish(connection)
            throw PostgresError(.unavailable, message: configuration.scrub(message), operation: "connect to \(configuration.redacted)")
        }
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        self.pointer = connection
        self.configuration = configuration
        self.counter = counter
    }

    deinit { PQfinish(pointer) }

    // MARK: - Statements

    /// Runs `sql` with `values` bound to `$1`, `$2`, … as a prepared statement (prepared on this
    /// connection at its first use) and returns its rows.
    public func query(_ sql: String, _ values: [PostgresValue] = []) throws(PostgresError) -> PostgresResult {
        guard values.count <= Int(UInt16.max) else {
            throw .misuse("\(values.count) parameters; PostgreSQL takes at most 65535", operation: Self.summary(sql))
        }
        let name = try preparedName(sql, values)
        let result = try Self.withParameters(values) { count, pointers, lengths, formats in
            PQexecPrepared(pointer, name, count, pointers, lengths, formats, 1)
        }
        return try check(result, operation: Self.summary(sql)).decode(operation: Self.summary(sql))
    }

    /// Runs `sql` with `values` without keeping it prepared (`PQexecParams`): for statements run once,
    /// like a bulk insert whose text depends on the number of rows.
    public func queryOnce(_ sql: String, _ values: [PostgresValue] = []) throws(PostgresError) -> PostgresResult {
        guard values.count <= Int(UInt16.max) else {
            throw .misuse("\(values.count) parameters; PostgreSQL takes at most 65535", operation: Self.summary(sql))
        }
        let types = Self.parameterTypes(values)
        let result = try Self.withParameters(values) { count, pointers, lengths, formats in
            types.withUnsafeBufferPointer { types in PQexecParams(pointer, sql, count, types.baseAddress, pointers, lengths, formats, 1) }
        }
        return try check(result, operation: Self.summary(sql)).decode(operation: Self.summary(sql))
    }

    /// Runs SQL without parameters (several statements separated by `;` are fine): DDL, `BEGIN`,
    /// `COMMIT`, `LISTEN`. Returns the last statement's command tag.
    @discardableResult
    public func execute(_ sql: String) throws(PostgresError) -> String {
        let handle = try check(PQexec(pointer, sql), operation: Self.summary(sql))
        return PQcmdStatus(handle.pointer).map { String(cString: $0) } ?? ""
    }

    private func preparedName(_ sql: String, _ values: [PostgresValue]) throws(PostgresError) -> String {
        if let name = prepared[sql] { return name }
        let name = "pulse_\(prepared.count + 1)"
        let types = Self.parameterTypes(values)
        let result = types.withUnsafeBufferPointer { types in PQprepare(pointer, name, sql, Int32(types.count), types.baseAddress) }
        _ = try check(result, operation: "prepare " + Self.summary(sql))
        prepared[sql] = name
        return name
    }

    /// Only bytea is stated (its values travel in binary); the server infers every other type.
    private static func parameterTypes(_ values: [PostgresValue]) -> [Oid] {
        values.map { value in
            if case .bytes = value { return PostgresValue.byteaOID }
            return 0
        }
    }

    /// Calls `body` with libpq's parameter arrays: values (NULL for SQL NULL), lengths, formats.
    private static func withParameters(
        _ values: [PostgresValue],
        _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> OpaquePointer?
    ) throws(PostgresError) -> OpaquePointer? {
        var storage: [UInt8] = []
        var offsets: [Int?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        for (index, value) in values.enumerated() {
            if let (bytes, binary) = try value.encoded(parameter: index + 1) {
                offsets.append(storage.count)
                storage += bytes
                lengths.append(Int32(bytes.count))
                formats.append(binary ? 1 : 0)
            } else {
                offsets.append(nil)
                lengths.append(0)
                formats.append(0)
            }
        }
        storage.append(0)  // never empty, so the buffer has a base address
        return storage.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!)
            let pointers: [UnsafePointer<CChar>?] = offsets.map { offset in offset.map { (base + $0).assumingMemoryBound(to: CChar.self) } }
            return pointers.withUnsafeBufferPointer { pointers in
                lengths.withUnsafeBufferPointer { lengths in
                    formats.withUnsafeBufferPointer { formats in
                        body(Int32(values.count), pointers.baseAddress, lengths.baseAddress, formats.baseAddress)
                    }
                }
            }
        }
    }

    /// Counts the round trip and turns a failed result into a typed error.
    private func check(_ result: OpaquePointer?, operation: @autoclosure () -> String) throws(PostgresError) -> ResultHandle {
        counter?.add()
        guard let result else {
            throw PostgresError(connectionLost ? .unavailable : .server, message: errorMessage, operation: operation())
        }
        let handle = ResultHandle(result)
        switch handle.status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return handle
        default:
            let state = handle.field(pulse_pg_diag_sqlstate)
            let message = handle.field(pulse_pg_diag_message_primary).map { configuration.scrub(PostgresConfiguration.oneLine($0)) } ?? errorMessage
            // libpq's own failures (the server went away mid-statement) carry no SQLSTATE, or one of class 08.
            let kind = connectionLost ? .unavailable : state.map(PostgresError.kind(sqlState:)) ?? .server
            throw PostgresError(kind, message: message, operation: operation(), sqlState: state, constraint: handle.field(pulse_pg_diag_constraint_name))
        }
    }

    // MARK: - Connection state

    /// True once libpq has noticed the connection is gone.
    var connectionLost: Bool { PQstatus(pointer) != CONNECTION_OK }

    /// libpq's last message for this connection, on one line, the password scrubbed.
    var errorMessage: String {
        configuration.scrub(PostgresConfiguration.oneLine(String(cString: PQerrorMessage(pointer))))
    }

    /// The server process serving this connection (`pg_backend_pid()`); notifications name it.
    public var backendPID: Int32 { PQbackendPID(pointer) }

    /// True while a transaction block is open (or failed and not yet rolled back).
    public var isInTransaction: Bool {
        let status = PQtransactionStatus(pointer)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    /// True when the connection can take a statement: libpq thinks it is up, no transaction is open,
    /// and its idle socket has nothing to read. Checked without a round trip, so a pool does not hand
    /// out a connection that died while it sat idle: a server that ends a connection (shutting down,
    /// `pg_terminate_backend`) sends an error and closes it, and an idle connection that does not
    /// LISTEN receives nothing else unasked.
    public func isUsable() -> Bool {
        guard PQstatus(pointer) == CONNECTION_OK, !isInTransaction else { return false }
        var descriptor = pollfd(fd: PQsocket(pointer), events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) == 0
    }

    /// Reconnects with the same settings (`PQreset`); prepared statements are gone with the old
    /// server process and are prepared again on first use.
    /// - Throws: `PostgresError(.unavailable)` when the server still cannot be reached.
    public func reset() throws(PostgresError) {
        prepared.removeAll()
        PQreset(pointer)
        guard PQstatus(pointer) == CONNECTION_OK else {
            throw PostgresError(.unavailable, message: errorMessage, operation: "reconnect to \(configuration.redacted)")
        }
    }

    // MARK: - Helpers

    /// The statement's first words, for errors (never its values: those are parameters).
    static func summary(_ sql: String) -> String {
        sql.split(whereSeparator: { $0 == " " || $0 == "\n" }).prefix(4).joined(separator: " ")
    }

    /// A NULL-terminated array of C strings for the length of `body`.
    static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
