import PulseHTTPServer
import PulseCore
import Testing
@testable import PulseServer
@testable import PulseServerStorage
@testable import PulseSyncAPI

@Suite struct KeyAnswersTests {
    static let table = KeyTableRecord(sessionId: "talk", deckVersion: 3, packageId: TestContent.packageAID, slides: [
        SlideKey(n: 1, assetHash: Digest(of: [1]), keyB64: "K1", nonceB64: "N1"),
        SlideKey(n: 0, assetHash: Digest(of: [0]), keyB64: "K0", nonceB64: "N0"),
    ])

    static func body(_ response: SharedResponse) -> String {
        guard case let .bytes(bytes) = response.template.body else { return "not bytes" }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Each released count has its answer, slides in order, the range clamped to the table; the headers of the route.
    @Test func theAnswerForEachReleasedCount() {
        let answers = KeyAnswers(Self.table)
        #expect(Self.body(answers.response(releasing: 0..<0)) == #"{"deckVersion":3,"released":[]}"# + "\n")
        #expect(Self.body(answers.response(releasing: 0..<1)) == #"{"deckVersion":3,"released":[{"keyB64":"K0","n":0,"nonceB64":"N0"}]}"# + "\n")
        let both = #"{"deckVersion":3,"released":[{"keyB64":"K0","n":0,"nonceB64":"N0"},{"keyB64":"K1","n":1,"nonceB64":"N1"}]}"# + "\n"
        #expect(Self.body(answers.response(releasing: 0..<2)) == both)
        #expect(Self.body(answers.response(releasing: 0..<7)) == both)
        let response = answers.response(releasing: 0..<1).template
        #expect(response.status == 200)
        #expect(response.headers.map { "\($0.name): \($0.value)" } == ["Content-Type: application/json", "Cache-Control: no-store"])
    }

    /// Prepared once per count and shared by every request (and by the copies of the cache's value).
    @Test func eachAnswerIsPreparedOnce() {
        let answers = KeyAnswers(Self.table)
        let copy = answers
        #expect(answers.response(releasing: 0..<1) === copy.response(releasing: 0..<1))
        #expect(answers.response(releasing: 0..<2) === answers.response(releasing: 0..<9))
        #expect(answers.response(releasing: 0..<1) !== answers.response(releasing: 0..<2))
    }
}
