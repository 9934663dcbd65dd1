import Foundation
import PulseHTTPServer
import PulseTestSupport
import Testing
@testable import PulseOrigin

@Suite struct AccessLogTests {
    @Test func oneEscapedLinePerRequest() throws {
        let folder = try TestFolder()
        let path = folder.path("access.log")
        let log = try AccessLog.file(path)
        log.record(HTTPExchange(
            client: Array("10.1.2.3".utf8), method: "GET", target: Array("/a b\n\\c".utf8), status: 404, bodyBytes: 10,
            durationNanoseconds: 1_234_567, note: "miss", completed: true))
        log.record(HTTPExchange(
            client: Array("::1".utf8), method: "", target: [], status: 0, bodyBytes: 0,
            durationNanoseconds: 5_000, note: "refused", completed: false))
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines[0].hasSuffix(" 10.1.2.3 GET /a\\x20b\\x0a\\x5cc 404 10 1.234ms miss"))
        #expect(lines[0].range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ "#, options: .regularExpression) != nil)
        #expect(lines[1].hasSuffix(" ::1 - - 0 0 0.005ms refused,aborted"))
    }

    /// The default format, pinned whole (issue 19 item 3 left it as it was): time, client, method, target, status,
    /// body bytes, milliseconds with three decimals, note.
    @Test func theTextLineIsPinned() throws {
        let folder = try TestFolder()
        let path = folder.path("access.log")
        let log = try AccessLog.file(path)
        log.record(HTTPExchange(
            client: Array("203.0.113.7".utf8), method: "GET", target: Array("/api/sync/keys?session=keynote".utf8), status: 200,
            bodyBytes: 412, durationNanoseconds: 412_345, note: "keys:3", completed: true))
        let line = try String(contentsOfFile: path, encoding: .utf8)
        #expect(line.range(
            of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ 203\.0\.113\.7 GET /api/sync/keys\?session=keynote 200 412 0\.412ms keys:3\n$"#,
            options: .regularExpression) != nil, "\(line)")
    }

    /// Issue 10 item 10: the method is escaped like the target, so it cannot move the cursor or fake fields.
    @Test func methodIsEscaped() throws {
        let folder = try TestFolder()
        let path = folder.path("access.log")
        let log = try AccessLog.file(path)
        log.record(HTTPExchange(
            client: Array("10.1.2.3".utf8), method: "\u{1b}[2J\u{8}\u{b}GET 200", target: Array("/x".utf8), status: 400,
            bodyBytes: 0, durationNanoseconds: 1_000, note: "bad-request:method", completed: true))
        let line = try String(contentsOfFile: path, encoding: .utf8)
        #expect(line.hasSuffix(" 10.1.2.3 \\x1b[2J\\x08\\x0bGET\\x20200 /x 400 0 0.001ms bad-request:method\n"))
        #expect(!line.utf8.contains { $0 < 0x20 && $0 != 0x0a })
    }
}
