import CPostgres
import Foundation
import PulseSystem
import Synchronization

/// `LISTEN` on a connection of its own, with a thread that waits on its socket (`poll` on `PQsocket`,
/// no timer) and hands every notification to `handler` (`PQconsumeInput`, then `PQnotifies`).
///
/// When the connection breaks (the server restarted, the network failed; TCP keepalives notice a dead
/// peer), the thread reports `.disconnected` and reconnects on its own, waiting 50 ms, then twice as
/// long each time up to 2 s; after it is listening again it reports `.connected`. Notifications sent
/// while it was away are lost — PostgreSQL keeps none for a listener that is gone — so a caller must
/// treat a reconnect as "anything may have changed".
public final class PostgresListener: Sendable {
    /// One `NOTIFY`.
    public struct Notification: Equatable, Sendable {
        public let channel: String
        public let payload: String
        /// The server process that sent it (a connection's `backendPID`).
        public let backendPID: Int32
    }

    public enum Event: Sendable {
        case notification(Notification)
        /// The connection broke; the listener is reconnecting.
        case disconnected(PostgresError)
        /// Listening again after `.disconnected` (not sent for the first connection, made in `init`).
        case connected
    }

    private let worker: Worker

    /// Connects and runs `LISTEN` for each channel before returning, so nothing committed after
    /// `init` returns is missed; then starts the thread.
    /// - Parameter channels: channel names (`[a-z0-9_]`, up to 63 characters).
    /// - Parameter handler: called on the listener's thread, one event at a time; keep it short.
    /// - Throws: `PostgresError` when the first connection or a LISTEN fails.
    public init(configuration: PostgresConfiguration, channels: [String], handler: @escaping @Sendable (Event) -> Void) throws(PostgresError) {
        for channel in channels where !Self.isValidChannel(channel) {
            throw .misuse("\(channel) is not a channel name ([a-z0-9_], 1 to 63 characters)", operation: "LISTEN")
        }
        let connection = try Worker.listen(configuration, channels)
        worker = try Worker(configuration: configuration, channels: channels, handler: handler, connection: connection)
        let worker = self.worker
        let thread = Thread { worker.run() }
        thread.name = "postgres-listener"
        thread.start()
    }

    deinit { stop() }

    /// True while the listener's connection is up and listening.
    public var isConnected: Bool { worker.connected.load(ordering: .acquiring) }

    /// Times the listener connected again after losing its connection (metrics).
    public var reconnects: Int { worker.reconnects.load(ordering: .relaxed) }

    /// Stops the thread and closes the connection; returns when both are done. Idempotent.
    public func stop() { worker.stop() }

    static func isValidChannel(_ name: String) -> Bool {
        (1...63).contains(name.utf8.count)
            && name.utf8.allSatisfy { ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: "_") }
    }

    /// The thread's state: the connection (touched only by the thread once it runs) and a pipe that
    /// wakes its `poll` to stop.
    // @unchecked: the connection is touched only by the worker's thread once it runs; the pipe's ends are fixed.
    private final class Worker: @unchecked Sendable {
        let configuration: PostgresConfiguration
        let channels: [String]
        let handler: @Sendable (Event) -> Void
        let connected = Atomic<Bool>(true)
        let reconnects = Atomic<Int>(0)
        private let stopping = Atomic<Bool>(false)
        private var connection: PostgresConnection?
        private let wakeRead: Int32
        private let wakeWrite: Int32
        private let finished = DispatchSemaphore(value: 0)

        init(configuration: PostgresConfiguration, channels: [String], handler: @escaping @Sendable (Event) -> Void, connection: PostgresConnection) throws(PostgresError) {
            var descriptors: [Int32] = [-1, -1]
            guard pipe(&descriptors) == 0 else {
                throw .misuse("cannot create a pipe: \(Errno.current)", operation: "start the listener")
            }
            _ = fcntl(descriptors[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(descriptors[1], F_SETFD, FD_CLOEXEC)
            wakeRead = descriptors[0]
            wakeWrite = descriptors[1]
            self.configuration = configuration
            self.channels = channels
            self.handler = handler
            self.connection = connection
        }

        static func listen(_ configuration: PostgresConfiguration, _ channels: [String]) throws(PostgresError) -> PostgresConnection {
            let connection = try PostgresConnection(configuration)
            for channel in channels { try connection.execute("LISTEN \"\(channel)\"") }
            return connection
        }

        func stop() {
            guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
            finished.wait()
            close(wakeRead)
            close(wakeWrite)
        }

        func run() {
            var backoff: Int32 = 50
            while !stopping.load(ordering: .acquiring) {
                guard let connection else {
                    do {
                        let fresh = try Self.listen(configuration, channels)
                        connection = fresh
                        backoff = 50
                        reconnects.add(1, ordering: .relaxed)
                        handler(.connected)
                        connected.store(true, ordering: .releasing)
                    } catch {
                        if waitForWake(milliseconds: backoff) { break }
                        backoff = min(backoff * 2, 2000)
                    }
                    continue
                }
                var descriptors = [
                    pollfd(fd: PQsocket(connection.pointer), events: Int16(POLLIN), revents: 0),
                    pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
                ]
                let ready = poll(&descriptors, 2, -1)
                if ready < 0 && errno == EINTR { continue }
                if descriptors[1].revents != 0 { break }
                guard descriptors[0].revents != 0 else { continue }
                if let error = consume(connection) {
                    connected.store(false, ordering: .releasing)
                    self.connection = nil
                    handler(.disconnected(error))
                }
            }
            connection = nil
            finished.signal()
        }

        /// Reads what arrived and hands over every notification; returns an error when the connection broke.
        private func consume(_ connection: PostgresConnection) -> PostgresError? {
            guard PQconsumeInput(connection.pointer) != 0 else {
                return PostgresError(.unavailable, message: connection.errorMessage, operation: "listen")
            }
            while let notification = PQnotifies(connection.pointer) {
                let event = Notification(
                    channel: String(cString: notification.pointee.relname), payload: String(cString: notification.pointee.extra),
                    backendPID: notification.pointee.be_pid)
                PQfreemem(notification)
                handler(.notification(event))
            }
            return connection.connectionLost ? PostgresError(.unavailable, message: connection.errorMessage, operation: "listen") : nil
        }

        /// Waits up to `milliseconds`; true when woken to stop.
        private func waitForWake(milliseconds: Int32) -> Bool {
            var descriptor = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
            return poll(&descriptor, 1, milliseconds) > 0 || stopping.load(ordering: .acquiring)
        }
    }
}
