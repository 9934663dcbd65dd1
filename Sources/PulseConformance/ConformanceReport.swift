import PulseCore

/// The suite's report: a table of every rule run with its verdict and evidence, or the same as JSON.
public enum ConformanceReport {
    /// One block per rule: `PASS  §2   sign.window   <summary>`, then its evidence indented.
    public static func table(_ results: [RuleResult]) -> [String] {
        let width = max(24, results.map(\.rule.id.count).max() ?? 0)
        var lines: [String] = []
        for result in results {
            let id = result.rule.id.padding(toLength: width, withPad: " ", startingAt: 0)
            let source = result.rule.source.padding(toLength: 10, withPad: " ", startingAt: 0)
            lines.append("\(result.verdict.rawValue)  \(source)\(id)  \(result.rule.summary)")
            lines += result.evidence.map { "      " + $0 }
        }
        return lines
    }

    /// `27 passed, 1 failed (sign.window), 2 skipped`.
    public static func summary(_ results: [RuleResult]) -> String {
        let failed = results.filter { $0.verdict == .fail }.map(\.rule.id)
        let passed = results.filter { $0.verdict == .pass }.count
        let skipped = results.filter { $0.verdict == .skip }.map(\.rule.id)
        var text = "\(passed) passed, \(failed.count) failed"
        if !failed.isEmpty { text += " (" + failed.joined(separator: ", ") + ")" }
        text += ", \(skipped.count) skipped"
        if !skipped.isEmpty { text += " (" + skipped.joined(separator: ", ") + "); a skip is not a failure" }
        return text
    }

    public static func json(_ results: [RuleResult], server: String) -> JSONValue {
        [
            "server": .string(server), "passed": .int(results.filter { $0.verdict == .pass }.count),
            "failed": .array(results.filter { $0.verdict == .fail }.map { .string($0.rule.id) }),
            "skipped": .array(results.filter { $0.verdict == .skip }.map { .string($0.rule.id) }),
            "rules": .array(results.map(\.json)),
        ]
    }
}
