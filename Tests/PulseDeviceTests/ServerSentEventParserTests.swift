import Testing
@testable import PulseDevice

@Suite struct ServerSentEventParserTests {
    static let stream = "retry: 3000\n\nid: 7\nevent: state\ndata: {\"state\":\"live\"}\n\n: heartbeat\n\nid: 8\r\nevent: advance\r\ndata: {\"maxShown\":4,\r\ndata:  \"deckVersion\":1}\r\n\r\nid: 9\revent: manifest\rdata:x\r\r"

    static let expected = [
        ServerSentEvent(id: "7", event: "state", data: "{\"state\":\"live\"}"),
        ServerSentEvent(id: "8", event: "advance", data: "{\"maxShown\":4,\n \"deckVersion\":1}"),
        ServerSentEvent(id: "9", event: "manifest", data: "x"),
    ]

    @Test func wholeStream() {
        var parser = ServerSentEventParser()
        #expect(parser.feed(Array(Self.stream.utf8)) == Self.expected)
        #expect(parser.retryMilliseconds == 3000)
        #expect(parser.lastEventId == "9")
    }

    /// Cut at every byte, so a CRLF split across two pieces counts as one line end.
    @Test func splitAtEveryByte() {
        let bytes = Array(Self.stream.utf8)
        for cut in 0...bytes.count {
            var parser = ServerSentEventParser()
            let events = parser.feed(Array(bytes[..<cut])) + parser.feed(Array(bytes[cut...]))
            #expect(events == Self.expected, "cut at \(cut)")
        }
        var parser = ServerSentEventParser()
        #expect(bytes.flatMap { parser.feed([$0]) } == Self.expected)
    }

    @Test func anEventWithoutDataIsNotDispatchedButItsIdIsKept() {
        var parser = ServerSentEventParser()
        #expect(parser.feed(Array("id: 3\nevent: state\n\ndata: a\n\n".utf8)) == [ServerSentEvent(id: "3", event: "message", data: "a")])
        #expect(parser.feed(Array("retry: soon\n\n".utf8)).isEmpty)
        #expect(parser.retryMilliseconds == nil)
    }
}
