import PulseCore

/// A CIDR network (`10.20.0.0/16`, `2001:db8:42::/48`; a bare address is a /32 or /128): a venue
/// network or a trusted proxy.
public struct IPNetwork: Hashable, Sendable, CustomStringConvertible {
    public let address: IPAddress
    /// The prefix length in the address's own family (0…32 for IPv4, 0…128 for IPv6).
    public let prefixLength: Int

    /// Parses CIDR text. Host bits must be zero (`10.1.2.3/8` is refused: it is usually a typo).
    /// - Throws: a `ServerError.badInput` naming the problem.
    public init(parsing text: String) throws(ServerError) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]) else {
            throw ServerError.badInput("\"\(text)\" is not an IPv4 or IPv6 network (like 10.20.0.0/16 or 2001:db8::/48)")
        }
        let maximum = address.isIPv4 ? 32 : 128
        var length = maximum
        if parts.count == 2 {
            guard let parsed = BoundedDecimal.parse(parts[1], maxDigits: 3, maximum: maximum) else {
                throw ServerError.badInput("\"\(text)\": the prefix length must be 0 to \(maximum)")
            }
            length = parsed
        }
        let network = IPNetwork(address: address, prefixLength: length)
        guard network.masked(address) == address else {
            throw ServerError.badInput(
                "\"\(text)\" has host bits set; the network is \(IPNetwork(address: network.masked(address), prefixLength: length))")
        }
        self = network
    }

    init(address: IPAddress, prefixLength: Int) {
        self.address = address
        self.prefixLength = prefixLength
    }

    /// True when `candidate` is inside this network (an IPv4 address never matches an IPv6 network
    /// other than `::/0`-style ones covering the mapped range, and vice versa).
    public func contains(_ candidate: IPAddress) -> Bool {
        guard candidate.isIPv4 == address.isIPv4 else { return false }
        return masked(candidate) == address
    }

    /// `candidate` with the bits past the prefix cleared.
    private func masked(_ candidate: IPAddress) -> IPAddress {
        let bits = address.isIPv4 ? prefixLength + 96 : prefixLength
        var bytes = candidate.bytes
        for index in 0..<16 {
            let keep = max(0, min(8, bits - index * 8))
            bytes[index] &= keep == 8 ? 0xff : ~(0xff >> UInt8(keep))
        }
        return IPAddress(bytes: bytes)
    }

    public var description: String { "\(address)/\(prefixLength)" }
}
