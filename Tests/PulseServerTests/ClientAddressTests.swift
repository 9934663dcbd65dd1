import PulseHTTPServer
import Testing
@testable import PulseServer
@testable import PulseServerStorage
@testable import PulseSyncAPI

/// Which address the venue rule and the enrollment limit see.
@Suite struct ClientAddressTests {
    static func resolve(_ peer: String, _ forwarded: [String], trusted: [String]) throws -> String? {
        ClientAddress.resolve(
            peer: HTTPClientAddress(peer), forwardedFor: forwarded.map { Array($0.utf8) },
            trusted: try trusted.map { try IPNetwork(parsing: $0) })?.description
    }

    @Test func forwardedForCountsOnlyBehindTrustedProxies() throws {
        // No trusted proxy: the peer, whatever the header says.
        #expect(try Self.resolve("203.0.113.9", ["10.20.0.5"], trusted: []) == "203.0.113.9")
        // An untrusted peer's header is ignored.
        #expect(try Self.resolve("203.0.113.9", ["10.20.0.5"], trusted: ["10.0.0.0/24"]) == "203.0.113.9")
        // Behind one trusted proxy: the right-most hop.
        #expect(try Self.resolve("10.0.0.2", ["10.20.0.5"], trusted: ["10.0.0.0/24"]) == "10.20.0.5")
        // A client's own forged hops on the left do not count.
        #expect(try Self.resolve("10.0.0.2", ["10.20.0.77, 198.51.100.4"], trusted: ["10.0.0.0/24"]) == "198.51.100.4")
        // Two proxies: trusted hops are skipped from the right, over several header lines too.
        #expect(try Self.resolve("10.0.0.2", ["198.51.100.4", "10.0.0.3"], trusted: ["10.0.0.0/24"]) == "198.51.100.4")
        // All hops trusted: the left-most.
        #expect(try Self.resolve("10.0.0.2", ["10.0.0.7,10.0.0.3"], trusted: ["10.0.0.0/24"]) == "10.0.0.7")
        // No header: the proxy itself.
        #expect(try Self.resolve("10.0.0.2", [], trusted: ["10.0.0.0/24"]) == "10.0.0.2")
        // A hop that does not parse: no address (the venue rule answers "outside").
        #expect(try Self.resolve("10.0.0.2", ["10.20.0.5, unknown"], trusted: ["10.0.0.0/24"]) == nil)
        #expect(try Self.resolve("10.0.0.2", ["10.20.0.5:443"], trusted: ["10.0.0.0/24"]) == nil)
        // IPv6 peers and hops.
        #expect(try Self.resolve("2001:db8::1", [" 2001:db8:42::7 "], trusted: ["2001:db8::/64"]) == "2001:db8:42::7")
    }
}
