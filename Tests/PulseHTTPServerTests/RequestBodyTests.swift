import Foundation
import PulseHTTPServer
import Testing

/// Request bodies when the configuration allows them (for pulse-server: enroll, diag samples).
@Suite(.serialized) struct RequestBodyTests {
    static func server(limit: Int = 100) throws -> TestServer {
        try TestServer({ $0.maxRequestBodyBytes = limit }) { request in
            text(200, "\(request.method) \(request.body.map { String(decoding: $0, as: UTF8.self) } ?? "<none>")")
        }
    }

    @Test func contentLengthBodyReachesTheResponder() throws {
        let server = try Self.server()
        let client = try server.client()
        let response = try client.request("POST", "/enroll", body: Array("{\"token\":\"t\"}".utf8))
        #expect(response.text == "POST {\"token\":\"t\"}")
        #expect(try client.request("GET", "/x").text == "GET <none>")  // kept alive, no body left behind
        let exact = try client.request("POST", "/x", body: [UInt8](repeating: 0x61, count: 100))
        #expect(exact.text == "POST " + String(repeating: "a", count: 100))
    }

    @Test func chunkedBodyIsCollected() throws {
        let server = try Self.server()
        let client = try server.client()
        try client.send("POST /diag HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1;ext=1\r\n \r\n5\r\nworld\r\n0\r\n\r\n")
        #expect(try client.readResponse().text == "POST hello world")
        #expect(try client.request("GET", "/x").status == 200)
    }

    /// Over the limit by Content-Length: 413 at once, before the client sends the body.
    @Test func contentLengthOverTheLimitIsRefusedUnread() throws {
        let server = try Self.server()
        let client = try server.client(timeout: 5)
        try client.send("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 413)
        #expect(client.isClosedByPeer())
    }

    /// Over the limit in chunks: only the end of a body allows an answer (libmicrohttpd), so the rest is read and
    /// dropped, then 413 and close.
    @Test func chunkedBodyOverTheLimitGets413() throws {
        let server = try Self.server()
        let client = try server.client(timeout: 5)
        let chunk = String(repeating: "b", count: 60)
        try client.send("POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3c\r\n\(chunk)\r\n3c\r\n\(chunk)\r\n0\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 413)
        #expect(client.isClosedByPeer())
        #expect(server.exchanges(count: 1).first?.note == "body-too-large")
    }

    /// A client that keeps streaming far past the limit is disconnected rather than read forever.
    @Test func endlessChunkedBodyIsCutOff() throws {
        let server = try Self.server()
        let client = try server.client(timeout: 5)
        try client.send("POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        let chunk = "400\r\n" + String(repeating: "c", count: 1024) + "\r\n"
        var sent = 0
        while sent < 1 << 20 {
            guard (try? client.send(chunk)) != nil else { break }
            sent += 1024
        }
        #expect(sent < 1 << 20 || client.isClosedByPeer())
        #expect(server.exchanges(count: 1).first?.completed == false)
    }

    @Test func expectContinueIsAnswered() throws {
        let server = try Self.server()
        let client = try server.client()
        try client.send("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n")
        #expect(try client.readResponse().status == 100)
        try client.send("ok")
        #expect(try client.readResponse().text == "POST ok")
    }
}
