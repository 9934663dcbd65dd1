#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The service manager's side of the notification protocol (what systemd listens on for `Type=notify`): an
/// AF_UNIX datagram socket bound at a fresh path, whose `environment` a server is started with, and the
/// messages it sent, each as its `KEY=value` lines.
public final class NotifySocket {
    /// What `NOTIFY_SOCKET` says: a path, or `@name` for a name in the abstract namespace.
    public let path: String
    private let fd: Int32

    /// - Parameter abstract: bound in the abstract namespace (no file), as some service managers do.
    public init(abstract: Bool = false) throws {
        let name = "notify-\(UUID().uuidString.prefix(8))"
        path = abstract ? "@" + name : FileManager.default.temporaryDirectory.appendingPathComponent(name).path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket: \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = abstract ? [0] + Array(name.utf8) : Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw Failure("path too long: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { for (index, byte) in bytes.enumerated() { $0[index] = byte } }
        // An abstract name is exactly its bytes long; a path may be given with its terminating NUL.
        let length = abstract ? (MemoryLayout<sockaddr_un>.offset(of: \.sun_path) ?? 2) + bytes.count : MemoryLayout<sockaddr_un>.size
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(length)) }
        }
        guard bound == 0 else { close(fd); throw Failure("bind \(path): \(errno)") }
    }

    deinit {
        close(fd)
        if path.hasPrefix("/") { unlink(path) }
    }

    /// `NOTIFY_SOCKET` for the server's environment.
    public var environment: [String: String] { ["NOTIFY_SOCKET": path] }

    /// The next message's lines, or nil when none arrives within `seconds`.
    public func next(within seconds: Double = 10) -> [String]? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(seconds * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Messages until one has a line starting with `key` (e.g. `"READY=1"`); that one, or nil when time runs out.
    public func wait(for key: String, within seconds: Double = 10) -> [String]? {
        let deadline = Date().addingTimeInterval(seconds)
        while case let left = deadline.timeIntervalSinceNow, left > 0, let message = next(within: left) {
            if message.contains(where: { $0.hasPrefix(key) }) { return message }
        }
        return nil
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }
}
