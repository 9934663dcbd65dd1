import Foundation
import PulseCore
import PulseSystem
import PulseTestSupport
import Testing
@testable import PulseDevice

/// `answers.json`: written whole or not at all, 0600, and a damaged file is a clear error, never a crash
/// and never an empty state (which would undo the rollback protection).
@Suite struct AnswerStateTests {
    static let sample = AnswerState(
        signs: true, keySet: ["keys": []], keySetSeq: 2, verifiedTime: 1_796_280_000,
        answers: [
            "/api/sync/manifest?session=keynote": .init(seq: 7, packageVersion: "8994d8d6", iat: 1_796_279_000),
            "/api/sync/keys?session=keynote": .init(seq: 7, deckVersion: 3),
        ])

    @Test func roundTripsAndIsPrivate() throws {
        let temporary = try TestFolder()
        let url = temporary.url.appendingPathComponent("answers.json")
        #expect(try AnswerState.read(url) == AnswerState(), "a missing file is the state of a device that never saw a signed answer")
        try Self.sample.write(url)
        #expect(try AnswerState.read(url) == Self.sample)
        let info = try FileInfo.ofLink(url.path)
        #expect(info.permissions & 0o777 == 0o600)
    }

    /// A replace killed before its rename leaves a `.tmp-` file beside the state: the state read is the
    /// previous one, whole, and the next replace succeeds.
    @Test func aReplaceCutBeforeItsRenameLeavesThePreviousState() throws {
        let temporary = try TestFolder()
        let url = temporary.url.appendingPathComponent("answers.json")
        try Self.sample.write(url)
        var next = Self.sample
        next.answers["/api/sync/manifest?session=keynote"] = .init(seq: 8, packageVersion: "aa11")
        next.verified(iat: 1_796_290_000)
        let torn = Array(next.bytes.prefix(next.bytes.count / 2))
        try Data(torn).write(to: URL(fileURLWithPath: FileSystem.tempPath(beside: url.path)))
        #expect(try AnswerState.read(url) == Self.sample)
        try next.write(url)
        #expect(try AnswerState.read(url) == next)
        let left = try FileManager.default.contentsOfDirectory(atPath: temporary.url.path).filter { !$0.hasPrefix(".tmp-") }
        #expect(left == ["answers.json"])
    }

    /// A file written while `GET /api/sync/time` still counted holds `serverTime`, which that unsigned route may
    /// have pushed anywhere (a proxy, a server clock that jumped once): it is ignored, and the verified time is the
    /// newest `iat` recorded, so a device locked out that way gets back in.
    @Test func anEarlierFilesUnsignedServerTimeIsNotTrusted() throws {
        let temporary = try TestFolder()
        let url = temporary.url.appendingPathComponent("answers.json")
        try Data(#"""
            {"format": "pulse-device-answers/1", "signs": false, "serverTime": 4102444800, "keySetSeq": 0,
             "answers": {"/api/sync/manifest?session=keynote": {"seq": 7, "packageVersion": "8994d8d6", "iat": 1796279000},
                         "/api/sync/keys?session=keynote": {"seq": 7, "deckVersion": 3, "iat": 1796279990}}}
            """#.utf8).write(to: url)
        let state = try AnswerState.read(url)
        #expect(state.verifiedTime == 1_796_279_990)
        #expect(state.answers.count == 2)
    }

    static func damaged(_ name: String, _ whole: [UInt8]) -> [UInt8] {
        switch name {
        case "torn": Array(whole.prefix(whole.count - 9))
        case "garbage": [0xff, 0x00, 0x13, 0x37]
        case "empty": []
        case "not ours": Array(#"{"format":"pulse-device-cache/1","manifests":{}}"#.utf8)
        case "seq a string": Array(#"{"format":"pulse-device-answers/1","answers":{"/a":{"seq":"7"}}}"#.utf8)
        case "negative time": Array(#"{"format":"pulse-device-answers/1","verifiedTime":-1,"answers":{}}"#.utf8)
        case "signs without keys": Array(#"{"format":"pulse-device-answers/1","signs":true,"answers":{}}"#.utf8)
        case "deep": Array(String(repeating: "[", count: 100_000).utf8)
        default: [UInt8](repeating: 0x20, count: (1 << 20) + 1)
        }
    }

    @Test(arguments: ["torn", "garbage", "empty", "not ours", "seq a string", "negative time", "signs without keys", "deep", "huge"])
    func aDamagedFileIsAClearError(name: String) throws {
        let temporary = try TestFolder()
        let url = temporary.url.appendingPathComponent("answers.json")
        try Data(Self.damaged(name, Self.sample.bytes)).write(to: url)
        let error = try #require(throws: DeviceError.self, "\(name)") { try AnswerState.read(url) }
        #expect(error.kind == .storage)
        #expect(error.message.contains("answers.json is damaged"), "\(name): \(error.message)")
        #expect(!error.message.contains("\n"))
    }
}
