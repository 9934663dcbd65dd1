import Foundation
import PulseCore

/// Which versions of each document gc keeps: a pure function of the history, `--keep`, `--grace` and
/// the time, so a package and a target decide alike.
///
/// Per document (`sessions/keynote`, …), versions come newest first as the history lists them. A
/// version stays when it is the current one (the first), one of the `keep` newest, or published within
/// `grace` of `now`.
struct Retention {
    var keep: Int?
    var grace: TimeInterval
    var now: Date

    /// For each history key, which positions stay (true) and which go.
    /// - Throws: `OpsError` (bad input) for a publish time that is not `YYYY-MM-DDTHH:MM:SSZ`.
    func decide(_ history: [String: [String]], index: String) throws -> [String: [Bool]] {
        var decisions: [String: [Bool]] = [:]
        for (key, times) in history {
            decisions[key] = try times.enumerated().map { rank, text in
                guard let published = Timestamp.date(text) else {
                    throw OpsError(.badInput, index, "\(key): publishedAt \"\(text)\" is not a UTC time; gc stopped before deleting anything")
                }
                return rank == 0 || rank < (keep ?? Int.max) || now.timeIntervalSince(published) < grace
            }
        }
        return decisions
    }
}
