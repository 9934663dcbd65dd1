import PulseHTTPServer
import Testing

/// What a start-up line prints: the address the kernel bound, not the text of `--listen`.
@Suite struct ListenAddressTests {
    @Test(arguments: [(":0", "0.0.0.0:"), ("*:0", "0.0.0.0:"), ("127.0.0.1:0", "127.0.0.1:"), ("localhost:0", "127.0.0.1:"), ("[::1]:0", "[::1]:")])
    func boundAddressNamesTheHostAndThePortItGot(listen: String, prefix: String) throws {
        let server = try TestServer({ $0.listen = listen }) { _ in HTTPResponse(status: 204) }
        #expect(server.server.boundAddress == "\(prefix)\(server.port)")
        #expect(server.port != 0)
    }
}
