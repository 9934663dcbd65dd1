import PulseHTTPServer
import PulseServerStorage

/// Where a request comes from, for the venue rule and the enrollment rate limit.
///
/// The TCP peer, unless the peer is one of the `--trusted-proxy` networks: then `X-Forwarded-For` is read
/// from the right (each proxy appends the address it received the request from), skipping hops that are
/// trusted proxies themselves, and the first untrusted hop is the client. A client can write anything in
/// the header's left part, but never to the right of what a trusted proxy appended. A header from an
/// untrusted peer is ignored. A hop that does not parse ends the walk with no address (the venue rule
/// then answers "outside"); all hops trusted gives the left-most.
enum ClientAddress {
    static func resolve(peer: HTTPClientAddress?, forwardedFor: [[UInt8]], trusted: [IPNetwork]) -> IPAddress? {
        guard let peer else { return nil }
        let address = IPAddress(peer)
        guard !trusted.isEmpty, trusted.contains(where: { $0.contains(address) }) else { return address }
        var hops: [ArraySlice<UInt8>] = []
        for line in forwardedFor {
            hops += line.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        }
        var last = address
        for hop in hops.reversed() {
            guard let parsed = parseHop(hop) else { return nil }
            guard trusted.contains(where: { $0.contains(parsed) }) else { return parsed }
            last = parsed
        }
        return last
    }

    /// One hop: an address with optional spaces around it (no ports, brackets or obfuscated names).
    private static func parseHop(_ hop: ArraySlice<UInt8>) -> IPAddress? {
        var start = hop.startIndex, end = hop.endIndex
        while start < end, hop[start] == 0x20 || hop[start] == 0x09 { start += 1 }
        while end > start, hop[end - 1] == 0x20 || hop[end - 1] == 0x09 { end -= 1 }
        guard start < end, end - start <= 45 else { return nil }
        return IPAddress(String(decoding: hop[start..<end], as: UTF8.self))
    }
}

extension IPAddress {
    /// The peer address libmicrohttpd reported (IPv4 mapped, as here).
    init(_ address: HTTPClientAddress) {
        self.init(bytes: address.bytes)
    }
}

extension SyncAPI {
    /// The address `request` comes from (`ClientAddress`: the peer, or past the trusted proxies), for the
    /// staff API's audit log.
    public func clientAddress(of request: HTTPRequest) -> IPAddress? {
        ClientAddress.resolve(peer: request.client, forwardedFor: request.headers.values("x-forwarded-for"), trusted: configuration.trustedProxies)
    }
}
