import Foundation
@testable import PulseHTTPServer
import PulseSystem
import Testing

/// A prepared response that libmicrohttpd could not allocate (out of memory) costs its requests a 503, never the
/// server: the allocation is injected to fail.
@Suite struct SharedResponseAllocationTests {
    @Test func anUnallocatedResponseIsAnswered503AndTheServerGoesOn() throws {
        let failed = SharedResponse(text(200, "cached\n"), allocate: { _ in nil })
        let prepared = SharedResponse(text(200, "cached\n"))
        #expect(failed.native == nil)
        #expect(failed.template.status == 200, "what it was to send is kept, for logs")
        #expect(prepared.native != nil)
        let server = try TestServer { request in
            HTTPResponse(request.target == Array("/failed".utf8) ? failed : prepared, note: "-")
        }

        let client = try server.client()
        let answer = try client.request("GET", "/failed")
        #expect(answer.status == 503)
        #expect(answer.header("retry-after") == "1")
        #expect(answer.header("connection")?.lowercased() == "close")
        #expect(client.closesWithinTimeout(), "nothing more is read from that connection")

        // The next requests, on the same server, are answered as before; the failure is logged as what it was.
        for _ in 0..<3 {
            let again = try server.client().request("GET", "/prepared")
            #expect(again.status == 200)
            #expect(again.body == Array("cached\n".utf8))
        }
        let logged = server.exchanges(count: 4)
        #expect(logged.contains { $0.status == 503 && $0.note == "out-of-memory" })
    }
}
