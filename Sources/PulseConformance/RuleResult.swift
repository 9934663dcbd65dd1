import PulseCore

/// The outcome of one rule.
public enum Verdict: String, Sendable {
    case pass = "PASS"
    case fail = "FAIL"
    /// Not run: something it needs was not given (a staff token, an org, a registration token) or could not be
    /// set up. A skip is not a failure; the report lists every one with its reason.
    case skip = "SKIP"
}

/// One rule's verdict with its evidence: the requests made and what came back, and for a failure or skip why.
public struct RuleResult: Sendable {
    public let rule: ConformanceRule
    public let verdict: Verdict
    public let evidence: [String]

    public var json: JSONValue {
        [
            "id": .string(rule.id), "source": .string(rule.source), "summary": .string(rule.summary), "verdict": .string(verdict.rawValue),
            "evidence": .array(evidence.map { .string($0) }),
        ]
    }
}

/// Lines of evidence gathered while a rule runs.
final class Evidence {
    private(set) var lines: [String] = []
    func add(_ line: String) { lines.append(line) }
}

/// Ends a rule as skipped.
struct Skip: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// Ends a rule as failed (or, thrown from the set-up, the whole run).
public struct Broken: Error, CustomStringConvertible {
    public let reason: String
    init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// Fails the rule with `message` unless `condition` holds.
func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw Broken(message()) }
}
