import Foundation
import PulseSystem

/// A bound, listening, non-blocking TCP socket. Made here rather than by libmicrohttpd so that a failure
/// has its errno (address in use, permission denied) and port 0 can report the port it got.
struct ListenSocket {
    let descriptor: Int32
    let port: UInt16
    /// The address actually bound, as `host:port` (`0.0.0.0:8080` for `:8080`, `[::1]:8080` for IPv6).
    let boundAddress: String

    /// Parses `host:port` (`[v6]:port` for IPv6) and listens there.
    static func open(_ address: String, backlog: Int) throws(HTTPServerError) -> ListenSocket {
        guard let colon = address.lastIndex(of: ":"), let port = UInt16(address[address.index(after: colon)...]) else {
            throw .badAddress(address)
        }
        var host = String(address[..<colon])
        let isV6 = host.hasPrefix("[") && host.hasSuffix("]")
        if isV6 { host = String(host.dropFirst().dropLast()) }
        if host.isEmpty || host == "*" { host = "0.0.0.0" }
        if host == "localhost" { host = "127.0.0.1" }

        var storage = sockaddr_storage()
        let length: socklen_t
        if isV6 {
            var v6 = sockaddr_in6()
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            guard inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 else { throw .badAddress(address) }
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: v6, as: sockaddr_in6.self) }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else {
            var v4 = sockaddr_in()
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            guard inet_pton(AF_INET, host, &v4.sin_addr) == 1 else { throw .badAddress(address) }
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: v4, as: sockaddr_in.self) }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        }

        let fd = socket(isV6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw .cannotListen(address, reason: Errno.current.description) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, Int32(backlog)) == 0 else {
            let code = errno
            close(fd)
            switch code {
            case EADDRINUSE: throw .addressInUse(address)
            case EACCES, EPERM: throw .permissionDenied(address)
            default: throw .cannotListen(address, reason: Errno(code).description)
            }
        }
        var actual = sockaddr_storage()
        var actualLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &actualLength) }
        }
        let boundPort = withUnsafeBytes(of: &actual) { raw -> UInt16 in
            isV6 ? UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port)
                : UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port)
        }
        let boundHost = withUnsafePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { String(decoding: addressText($0), as: UTF8.self) }
        }
        return ListenSocket(
            descriptor: fd, port: boundPort, boundAddress: isV6 ? "[\(boundHost)]:\(boundPort)" : "\(boundHost):\(boundPort)")
    }
}

/// Text form of a client address (`127.0.0.1`, `::1`) as bytes; IPv4 without any allocation but the result.
func addressText(_ address: UnsafePointer<sockaddr>?) -> [UInt8] {
    guard let address else { return [0x2d] }
    switch Int32(address.pointee.sa_family) {
    case AF_INET:
        let v4 = UnsafeRawPointer(address).load(as: sockaddr_in.self)
        let value = UInt32(bigEndian: v4.sin_addr.s_addr)
        var out: [UInt8] = []
        out.reserveCapacity(15)
        for shift in [24, 16, 8, 0] {
            let octet = UInt8(truncatingIfNeeded: value >> UInt32(shift))
            if octet >= 100 { out.append(0x30 + octet / 100) }
            if octet >= 10 { out.append(0x30 + (octet / 10) % 10) }
            out.append(0x30 + octet % 10)
            if shift != 0 { out.append(0x2e) }
        }
        return out
    case AF_INET6:
        var v6 = UnsafeRawPointer(address).load(as: sockaddr_in6.self)
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        inet_ntop(AF_INET6, &v6.sin6_addr, &text, socklen_t(text.count))
        return text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    default:
        return [0x2d]
    }
}
