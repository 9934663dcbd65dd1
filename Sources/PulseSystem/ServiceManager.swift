#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The service manager's notification protocol (systemd's `sd_notify`, `Type=notify`): newline-separated
/// `KEY=value` assignments in one datagram to the AF_UNIX socket named by `$NOTIFY_SOCKET` (a path, or `@name` in
/// the abstract namespace). Without that variable (not started by systemd) every call does nothing, so a server
/// calls these unconditionally. No libsystemd: this is the whole protocol a server needs.
///
/// | call | sends | when |
/// |---|---|---|
/// | `ready(status:)` | `READY=1`, `STATUS=…` | listening: systemd starts the units ordered after it |
/// | `reloading()` | `RELOADING=1`, `MONOTONIC_USEC=…` | a SIGHUP reload begins (`ready` again when done) |
/// | `stopping(status:)` | `STOPPING=1`, `STATUS=…` | a stop begins |
/// | `status(_:)` | `STATUS=…` | a line `systemctl status` shows |
public final class ServiceManager: Sendable {
    /// The socket address from `$NOTIFY_SOCKET`, nil when there is none (or it is not a usable name).
    private let address: [UInt8]?

    /// The notifier of this process, read from its environment once.
    public static let current = ServiceManager(environment: ProcessInfo.processInfo.environment)

    public init(environment: [String: String]) {
        address = environment["NOTIFY_SOCKET"].flatMap(Self.socketName)
    }

    /// Whether a service manager asked for notifications.
    public var isListening: Bool { address != nil }

    public func ready(status: String) { send(["READY=1", "STATUS=\(status)"]) }

    public func reloading() {
        send(["RELOADING=1", "MONOTONIC_USEC=\(SystemClock.monotonicNanoseconds() / 1000)"])
    }

    public func stopping(status: String) { send(["STOPPING=1", "STATUS=\(status)"]) }

    public func status(_ text: String) { send(["STATUS=\(text)"]) }

    /// The bytes of `sun_path`: a path as it is, `@name` as NUL + name; nil when empty or too long for sockaddr_un.
    static func socketName(_ text: String) -> [UInt8]? {
        var bytes = Array(text.utf8)
        guard !bytes.isEmpty, !bytes.contains(0), bytes.first == UInt8(ascii: "/") || bytes.first == UInt8(ascii: "@") else { return nil }
        if bytes[0] == UInt8(ascii: "@") { bytes[0] = 0 }
        return bytes.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) ? bytes : nil
    }

    /// One datagram with `assignments`, one per line; a newline inside a value would start a new assignment, so
    /// it becomes a space. Failures are ignored: the manager is gone or the socket full, and serving goes on.
    private func send(_ assignments: [String]) {
        guard let address else { return }
        let message = Array(assignments.map { $0.replacingOccurrences(of: "\n", with: " ") }.joined(separator: "\n").utf8)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var target = sockaddr_un()
        target.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &target.sun_path) { path in
            for (index, byte) in address.enumerated() { path[index] = byte }
        }
        let length = socklen_t((MemoryLayout<sockaddr_un>.offset(of: \.sun_path) ?? 2) + address.count)
        _ = message.withUnsafeBytes { bytes in
            withUnsafePointer(to: &target) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), $0, length) }
            }
        }
    }
}
