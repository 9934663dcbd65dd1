import Foundation
import PulseHTTPServer
import PulseSystemTesting
import Testing

/// What reaches a responder and what the server refuses first (RFC 9112 framing, issue 10 items 4–6).
@Suite(.serialized) struct RequestHeadTests {
    /// Echoes what the responder saw: method, target, collected headers, body.
    static func echo() throws -> TestServer {
        try TestServer({ $0.requestHeaders = ["if-none-match", "x-forwarded-for"] }) { request in
            var lines = ["\(request.method) \(String(decoding: request.target, as: UTF8.self))"]
            for name in ["if-none-match", "x-forwarded-for"] {
                for value in request.headers.values(name) { lines.append("\(name): \(String(decoding: value, as: UTF8.self))") }
            }
            if let joined = request.headers["if-none-match"] { lines.append("joined: \(String(decoding: joined, as: UTF8.self))") }
            if let body = request.body { lines.append("body: \(String(decoding: body, as: UTF8.self))") }
            return text(200, lines.joined(separator: "\n"))
        }
    }

    static let ambiguous: [(String, String)] = [
        ("two Content-Length", "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\n"),
        ("two equal Content-Length", "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n"),
        ("Content-Length and Transfer-Encoding", "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        ("space before the colon", "GET /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n"),
        ("space in a header name", "GET /a HTTP/1.1\r\nHost: x\r\nX Y: z\r\n\r\n"),
        ("NUL in a header value", "GET /a HTTP/1.1\r\nHost: x\r\nX-A: a\u{0}b\r\n\r\n"),
        ("NUL at the end of a header value", "GET /a HTTP/1.1\r\nHost: x\r\nX-A: a\u{0}\r\n\r\n"),
        ("NUL at the end of the last header", "GET /a HTTP/1.1\r\nX-A: a\r\nHost: x\u{0}\r\n\r\n"),
        ("two Host", "GET /a HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n"),
        ("HTTP/1.1 without Host", "GET /a HTTP/1.1\r\n\r\n"),
        ("NUL in the request line", "GET /api/sync/asset/a\u{0}/../secret HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("space in the target", "GET /a b HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("two spaces after the method", "GET  /a HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("control byte in the target", "GET /a\u{1b}[2J HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("escape sequence in the method", "G\u{1b}[2JET /a HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("obs-fold", "GET /a HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n"),
        ("bare LF", "GET /a HTTP/1.1\nHost: x\n\n"),
        ("bare CR in a value", "GET /a HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n"),
        ("vertical tab in a value", "GET /a HTTP/1.1\r\nHost: x\r\nX-A: a\u{b}b\r\n\r\n"),
        ("Transfer-Encoding other than chunked", "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"),
        ("Content-Length not a number", "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\nabc"),
        ("Transfer-Encoding in HTTP/1.0", "POST /a HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
    ]

    /// Each is a 400 and the connection is closed: nothing after it can be trusted to start a request.
    @Test(arguments: ambiguous.indices)
    func ambiguousRequestsAreRefused(case index: Int) throws {
        let (name, raw) = Self.ambiguous[index]
        let server = try Self.echo()
        let client = try server.client(timeout: 5)
        // A second request right behind it: it must never be answered.
        try client.send(raw + "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 400, "\(name)")
        #expect(response.header("connection")?.lowercased() == "close", "\(name)")
        // libmicrohttpd 0.9.75 answers a malformed Content-Length itself and writes that 400's header twice:
        // whatever follows, the connection must close without answering the request behind.
        #expect(client.closesWithinTimeout(), "\(name)")
        // 400 from the server's checks, or 0 where libmicrohttpd refused it itself (a malformed Content-Length).
        let logged = server.exchanges(count: 1)
        #expect(logged.count == 1 && [400, 0].contains(logged[0].status), "\(name)")
        #expect(logged.allSatisfy { !$0.target.elementsEqual(Array("/smuggled".utf8)) }, "\(name)")
    }

    /// A `Content-Length` that is not a decimal number, or does not fit 64 bits, is refused by libmicrohttpd itself
    /// (`parse_connection_headers`), before PulseHTTPServer sees the request: 400, or 413. Version 0.9.75 (Debian 12's)
    /// then writes that answer's status line and headers twice: after queuing the error its state machine goes on
    /// to HEADERS_PROCESSED and builds the head again at START_REPLY (fixed upstream by f1bfbe71, "fixed handling of
    /// various errors automatically detected by MHD code", first released in 1.0.0). PulseHTTPServer cannot mend it:
    /// no callback runs between the headers' arrival and that check, and the public API exposes neither the read
    /// nor the write buffer. What holds: the status, `Connection: close`, the close, and the request behind it never
    /// answered. The doubled head is recorded as a known issue: this test fails once the library writes one head.
    @Test(arguments: [("-1", 400), ("+0", 400), ("12a", 400), ("99999999999999999999", 413)])
    func aContentLengthLibmicrohttpdRefusesItselfIsAnsweredAndClosed(value: String, status: Int) throws {
        let server = try Self.echo()
        let client = try server.client(timeout: 5)
        try client.send("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: \(value)\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n")
        let text = String(decoding: try client.readUntilQuiet(seconds: 2), as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 \(status) ") && text.contains("\r\nConnection: close\r\n"), "\(text)")
        #expect(client.isClosedNow())
        #expect(!text.contains("smuggled"), "the request behind was answered: \(text)")
        let heads = text.components(separatedBy: "HTTP/1.1 \(status) ").count - 1
        withKnownIssue("libmicrohttpd 0.9.75 writes the head of its own \(status) twice") {
            #expect(heads == 1, "\(heads) heads")
        }
    }

    @Test func wellFormedRequestsStillPass() throws {
        let server = try Self.echo()
        let client = try server.client()
        try client.send("GET /a?b=c HTTP/1.1\r\nHost: x\r\nX-Empty:\r\nX-Tabs:\t v \t\r\nIf-None-Match: \"1\"\r\n\r\n")
        let first = try client.readResponse()
        #expect(first.status == 200)
        #expect(first.text == "GET /a?b=c\nif-none-match: \"1\"\njoined: \"1\"")
        // HTTP/1.0 needs no Host; the connection stays usable for HTTP/1.1 requests.
        try client.send("GET /b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try client.readResponse().status == 200)
        #expect(try client.request("GET", "/c").status == 200)
    }

    /// Issue 10 item 11: several If-None-Match lines are one list (RFC 9110 §5.3); every X-Forwarded-For line is kept.
    @Test func repeatedHeadersKeepEveryLine() throws {
        let server = try Self.echo()
        let response = try server.client().request("GET", "/a", [
            ("If-None-Match", "\"1\""), ("X-Forwarded-For", "203.0.113.7"), ("If-None-Match", "W/\"2\", \"3\""),
            ("x-forwarded-for", "10.0.0.1"),
        ])
        #expect(response.text == """
            GET /a
            if-none-match: "1"
            if-none-match: W/"2", "3"
            x-forwarded-for: 203.0.113.7
            x-forwarded-for: 10.0.0.1
            joined: "1", W/"2", "3"
            """)
    }

    /// Issue 10 item 4: with bodies refused (the origin), a request announcing one gets 413 and the connection is
    /// closed, instead of a closed connection without a byte.
    @Test(arguments: [
        "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc",
        "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc",
        "GET /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    ])
    func bodiesAreRefusedWhenNoneIsAllowed(raw: String) throws {
        let server = try Self.echo()
        let client = try server.client(timeout: 5)
        try client.send(raw)
        let response = try client.readResponse()
        #expect(response.status == 413)
        #expect(client.isClosedByPeer())
        #expect(server.exchanges(count: 1).first?.completed == true)
    }

    @Test func emptyBodyIsNoBody() throws {
        let server = try Self.echo()
        let client = try server.client()
        try client.send("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.text == "POST /a")
        #expect(try client.request("GET", "/b").status == 200)  // kept alive
    }

    /// Issue 10 item 6: request lines that fill the connection's memory get 414 (or 431), never zero bytes.
    @Test func longRequestLinesAlwaysGetAnAnswer() throws {
        let server = try Self.echo()
        var statuses: Set<Int> = []
        for length in stride(from: 6800, through: 8600, by: 20) {
            let client = try server.client(timeout: 5)
            try client.send("GET /\(String(repeating: "a", count: length)) HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try client.readResponse()
            #expect([200, 414, 431].contains(response.status), "\(length)")
            statuses.insert(response.status)
        }
        #expect(statuses.contains(414))
    }

    /// Headers that fill the connection's memory get 431.
    @Test func largeHeadersAlwaysGetAnAnswer() throws {
        let server = try Self.echo()
        for length in stride(from: 6800, through: 8600, by: 40) {
            let client = try server.client(timeout: 5)
            try client.send("GET /a HTTP/1.1\r\nHost: x\r\nX-Pad: \(String(repeating: "p", count: length))\r\n\r\n")
            let response = try client.readResponse()
            #expect([200, 431].contains(response.status), "\(length)")
        }
    }

    @Test func clientAddressIsGiven() throws {
        let server = try TestServer { request in
            guard let client = request.client else { return text(500, "none") }
            return text(200, "\(client) \(client.isIPv4)")
        }
        #expect(try server.client().request("GET", "/").text == "127.0.0.1 true")
        #expect(try server.client(source: "127.0.0.9").request("GET", "/").text == "127.0.0.9 true")
    }
}

/// Trusted-proxy and venue networks are PulseServerStorage's `IPNetwork` (IPNetworkTests); the HTTP layer gives the
/// peer's address only.
@Suite struct ClientAddressTextTests {
    @Test func addressesReadAndPrintBack() throws {
        #expect(HTTPClientAddress("2001:db8::1")?.description == "2001:db8::1")
        #expect(HTTPClientAddress("127.0.0.1")?.description == "127.0.0.1")
        #expect(try #require(HTTPClientAddress("::ffff:10.1.0.1")).isIPv4)  // as a dual-stack socket reports it
        for bad in ["10.0.0.0/8", "+10.0.0.1", "10.0.0", "x", ""] { #expect(HTTPClientAddress(bad) == nil, "\(bad)") }
    }
}
