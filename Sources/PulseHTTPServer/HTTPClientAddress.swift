import Foundation

/// The IP address a connection came from: 16 bytes (IPv4 as its IPv4-mapped IPv6 form, `::ffff:a.b.c.d`), so
/// one comparison serves both families and a dual-stack listener's mapped addresses match IPv4 networks.
public struct HTTPClientAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address in network byte order, as two 64-bit halves.
    public let high: UInt64
    public let low: UInt64

    /// True for an IPv4 address (stored IPv4-mapped).
    public var isIPv4: Bool { high == 0 && low >> 32 == 0xffff }

    /// From 4 (IPv4) or 16 (IPv6) bytes in network order; nil for any other count.
    public init?(bytes: [UInt8]) {
        switch bytes.count {
        case 4:
            high = 0
            low = 0xffff << 32 | UInt64(bytes[0]) << 24 | UInt64(bytes[1]) << 16 | UInt64(bytes[2]) << 8 | UInt64(bytes[3])
        case 16:
            high = bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
            low = bytes[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
        default:
            return nil
        }
    }

    /// Parses `192.0.2.7` or `2001:db8::1`; nil if it is neither.
    public init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self.init(bytes: withUnsafeBytes(of: v4.s_addr) { Array($0) })
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        self.init(bytes: withUnsafeBytes(of: v6) { Array($0) })
    }

    /// From a socket address (AF_INET or AF_INET6); nil for anything else.
    init?(_ address: UnsafePointer<sockaddr>?) {
        guard let address else { return nil }
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            let v4 = UnsafeRawPointer(address).load(as: sockaddr_in.self)
            self.init(bytes: withUnsafeBytes(of: v4.sin_addr.s_addr) { Array($0) })
        case AF_INET6:
            let v6 = UnsafeRawPointer(address).load(as: sockaddr_in6.self)
            self.init(bytes: withUnsafeBytes(of: v6.sin6_addr) { Array($0) })
        default:
            return nil
        }
    }

    /// The 16 bytes in network order.
    public var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> UInt64(56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> UInt64(56 - 8 * $0)) }
    }

    /// `192.0.2.7` for IPv4 (mapped or not), `2001:db8::1` otherwise.
    public var description: String { String(decoding: text, as: UTF8.self) }

    /// The description as bytes, IPv4 without any allocation but the result (once per connection, for the log).
    var text: [UInt8] {
        if isIPv4 {
            var out: [UInt8] = []
            out.reserveCapacity(15)
            for shift in [24, 16, 8, 0] {
                let octet = UInt8(truncatingIfNeeded: low >> UInt64(shift))
                if octet >= 100 { out.append(0x30 + octet / 100) }
                if octet >= 10 { out.append(0x30 + (octet / 10) % 10) }
                out.append(0x30 + octet % 10)
                if shift != 0 { out.append(0x2e) }
            }
            return out
        }
        var v6 = in6_addr()
        withUnsafeMutableBytes(of: &v6) { $0.copyBytes(from: bytes) }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        inet_ntop(AF_INET6, &v6, &buffer, socklen_t(buffer.count))
        return buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    }
}
