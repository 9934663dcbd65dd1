import PulseServer
import PulseServerStorage
import Testing

@Suite struct IPNetworkTests {
    @Test(arguments: [
        ("192.0.2.7", "192.0.2.7"), ("0.0.0.0", "0.0.0.0"), ("255.255.255.255", "255.255.255.255"),
        ("::1", "::1"), ("::", "::"), ("2001:db8::1", "2001:db8::1"), ("2001:DB8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
        ("::ffff:192.0.2.7", "192.0.2.7"), ("64:ff9b::192.0.2.33", "64:ff9b::c000:221"), ("fe80::", "fe80::"),
        ("1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"), ("1::", "1::"),
    ])
    func addressesParseAndPrintCanonically(_ input: String, _ expected: String) throws {
        #expect(try #require(IPAddress(input)).description == expected)
    }

    @Test(arguments: [
        "", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1.2.3.-4", "a.b.c.d", " 1.2.3.4", "1.2.3.4 ", ":::", "1::2::3", "1:2:3:4:5:6:7:8:9",
        "12345::", "g::1", "[::1]", "fe80::1%eth0", "1.2.3.4::", "::1.2.3", "1:2:3:4:5:6:7::8:9",
    ])
    func garbageIsNotAnAddress(_ input: String) {
        #expect(IPAddress(input) == nil)
    }

    @Test func networksContainExactlyTheirAddresses() throws {
        let v4 = try IPNetwork(parsing: "10.20.0.0/15")
        #expect(v4.contains(IPAddress("10.21.255.255")!))
        #expect(!v4.contains(IPAddress("10.22.0.0")!))
        #expect(!v4.contains(IPAddress("::a14:1")!))  // the IPv6 address ::10.20.0.1 is not IPv4
        let host = try IPNetwork(parsing: "192.0.2.7")
        #expect(host.description == "192.0.2.7/32" && host.contains(IPAddress("192.0.2.7")!) && !host.contains(IPAddress("192.0.2.8")!))
        let everything = try IPNetwork(parsing: "0.0.0.0/0")
        #expect(everything.contains(IPAddress("203.0.113.1")!) && !everything.contains(IPAddress("2001:db8::1")!))
        let v6 = try IPNetwork(parsing: "2001:db8:40::/42")
        #expect(v6.contains(IPAddress("2001:db8:7f:ffff::1")!) && !v6.contains(IPAddress("2001:db8:80::")!))
    }

    @Test func badNetworksSayWhatIsWrong() {
        #expect(throws: ServerError.badInput("\"10.1.2.3/8\" has host bits set; the network is 10.0.0.0/8")) { try IPNetwork(parsing: "10.1.2.3/8") }
        #expect(throws: ServerError.badInput("\"10.0.0.0/33\": the prefix length must be 0 to 32")) { try IPNetwork(parsing: "10.0.0.0/33") }
        #expect(throws: ServerError.badInput("\"::/+1\": the prefix length must be 0 to 128")) { try IPNetwork(parsing: "::/+1") }
        #expect(throws: ServerError.self) { try IPNetwork(parsing: "10.0.0.0/") }
        #expect(throws: ServerError.self) { try IPNetwork(parsing: "venue-wifi") }
    }
}
