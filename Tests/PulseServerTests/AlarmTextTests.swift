import Testing
@testable import PulseSyncAPI

/// An alarm quotes the path a client sent: nothing in it may act on the terminal or fake another line.
@Suite struct AlarmTextTests {
    @Test func aHostilePathIsEscapedInAnAlarm() {
        let path = Array("/api/sync/keys\u{1b}[2J\u{202e}x\u{7f}".utf8) + [0xff]
        let text = SyncAPI.printable(path[...])
        #expect(text == "/api/sync/keys\\u{1B}[2J\\u{202E}x\\u{7F}\u{fffd}")
        #expect(!text.unicodeScalars.contains { $0.properties.generalCategory == .control })
        #expect(SyncAPI.printable(Array("/api/sync/time".utf8)[...]) == "/api/sync/time")
    }
}
