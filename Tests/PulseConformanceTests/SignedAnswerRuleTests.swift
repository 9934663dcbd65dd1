import Foundation
import PulseConformance
import PulseHTTPServer
import SyncTestSupport
import Testing

/// The rules of signed answers against a server that signs (made in the test, `AnswerSigner`), one that
/// does not, and servers broken in one thing each.
@Suite struct SignedAnswerRuleTests {
    static let rules: Set<String> = ["answer.keys", "answer.signature", "answer.sequence", "answer.expiry"]

    func run(_ flaw: AnswerSigner.Flaw, name: String = #function) throws -> [RuleResult] {
        let signer = try AnswerSigner(flaw)
        let harness = try ConformanceHarness(name, wrap: { sync, _ in signer.wrap(sync) })
        return try harness.run(only: Self.rules)
    }

    @Test func aSigningServerPassesEveryRule() throws {
        let results = try run(.none)
        #expect(results.count == 4 && results.failed.isEmpty && results.skipped.isEmpty, "\(results.report)")
    }

    @Test func aServerThatDoesNotSignIsSkippedNotFailed() throws {
        let results = try run(.unsigned)
        #expect(Set(results.skipped) == Self.rules, "\(results.report)")
        #expect(results.first?.evidence.first?.contains("does not sign") == true, "\(results.report)")
    }

    /// pulse-server itself: BaselineTests shows these rules pass against it; with signing off they are skipped.
    @Test func pulseServerWithSigningOffIsSkippedNotFailed() throws {
        let harness = try ConformanceHarness(configure: { $0.signAnswers = false })
        let results = try harness.run(only: Self.rules)
        #expect(Set(results.skipped) == Self.rules, "\(results.report)")
    }

    /// pulse-server's own signature, one character changed on the way out: answer.signature fails, the
    /// other rules (which read the same answers) fail or not, but none passes a wrong signature silently.
    @Test func pulseServerWithAWrongSignatureFails() throws {
        let harness = try ConformanceHarness(wrap: { sync, _ in
            Breaker(sync, alter: { request, response in
                guard Breaker.path(request) == "/api/sync/manifest",
                      let header = response.headers.first(where: { $0.name.lowercased() == "pulse-signature" })?.value,
                      let dots = header.range(of: "..")
                else { return response }
                var characters = Array(header)
                let at = header.distance(from: header.startIndex, to: dots.upperBound) + 10
                characters[at] = characters[at] == "A" ? "B" : "A"
                return Breaker.setting("Pulse-Signature", String(characters), in: response)
            })
        })
        let results = try harness.run(only: ["answer.signature"])
        #expect(results.verdict("answer.signature") == .fail, "\(results.report)")
        #expect(results.first?.evidence.last?.contains("rule signature") == true, "\(results.report)")
    }

    @Test(arguments: [
        (AnswerSigner.Flaw.wrongSignature, "answer.signature", "rule signature"),
        (.anotherDevice, "answer.signature", "rule binding"),
        (.rolledBackSequence, "answer.sequence", "rule rollback"),
        (.expired, "answer.expiry", "rule freeze"),
        (.noKeySet, "answer.keys", "publishes no answer keys"),
    ])
    func aServerBrokenInOneThingFailsThatRule(flaw: AnswerSigner.Flaw, rule: String, because: String) throws {
        let results = try run(flaw, name: "\(flaw)")
        #expect(results.verdict(rule) == .fail, "\(results.report)")
        let evidence = results.first { $0.rule.id == rule }?.evidence.last ?? ""
        #expect(evidence.contains(because), "\(rule): \(evidence)")
        print("broken signer: \(flaw) → \(rule): \(evidence)")
    }
}
