import Foundation
import PulseCore

/// Which versions of each document gc keeps, and why: a pure function of the history, the versions the
/// index names as current, `--keep`, `--grace` and the time, so a package, a pushed folder and S3 decide
/// alike (issue 11: they once ordered by file or push time).
///
/// Per document (`sessions/keynote`, …), versions come newest first as the history lists them: that
/// order, never a file time, is what `--keep` counts. A version stays when it is current (the first of
/// its history, and the one the index names as current if that is another: never dropped, whatever
/// `--keep` says), one of the `keep` newest, or published within `grace` of `now`.
struct Retention {
    var keep: Int?
    var grace: TimeInterval
    var now: Date

    /// Why a version stays.
    enum Reason: Equatable, Sendable, CustomStringConvertible {
        case current
        case withinKeep(Int)
        case withinGrace(until: Date)
        /// No `--keep` was given: every version stays.
        case everyVersion

        /// `current`, `within --keep 3`, `within --grace until 2026-12-08T14:00:00Z` (restic forget's style).
        var description: String {
            switch self {
            case .current: "current"
            case let .withinKeep(count): "within --keep \(count)"
            case let .withinGrace(until): "within --grace until \(Timestamp.string(until))"
            case .everyVersion: "no --keep"
            }
        }
    }

    /// For each history key, the reasons each position stays for (empty: it goes).
    /// - Parameters:
    ///   - history: publish times per key, newest first.
    ///   - current: per key, the position of the version the index names as current, if the index
    ///     names one apart from the history (app configs, and on a package sessions and series too).
    /// - Throws: `OpsError` (bad input) for a publish time that is not `YYYY-MM-DDTHH:MM:SSZ`.
    func decide(_ history: [String: [String]], current: [String: Int] = [:], index: String) throws -> [String: [[Reason]]] {
        var decisions: [String: [[Reason]]] = [:]
        for (key, times) in history {
            decisions[key] = try times.enumerated().map { rank, text in
                guard let published = Timestamp.date(text) else {
                    throw OpsError(.badInput, index, "\(key): publishedAt \"\(text)\" is not a UTC time; gc stopped before deleting anything")
                }
                var reasons: [Reason] = []
                if rank == 0 || current[key] == rank { reasons.append(.current) }
                if let keep, rank < keep { reasons.append(.withinKeep(keep)) }
                if keep == nil { reasons.append(.everyVersion) }
                let until = published.addingTimeInterval(grace)
                if now < until { reasons.append(.withinGrace(until: until)) }
                return reasons
            }
        }
        return decisions
    }
}

extension Retention {
    /// A history split by `decide`'s verdicts: what stays (in history order), what goes, and why each stays.
    struct Split<Version> {
        var kept: [String: [Version]] = [:]
        var dropped: [(key: String, version: Version)] = []
        var report: [GCReport.Kept] = []
    }

    /// Applies `decisions` (from `decide`) to `history`; `label` names a kept version in the report.
    static func split<Version>(
        _ history: [String: [Version]], by decisions: [String: [[Reason]]], label: (String, Version) -> String
    ) -> Split<Version> {
        var split = Split<Version>()
        for (key, versions) in history {
            for (version, reasons) in zip(versions, decisions[key]!) {
                if reasons.isEmpty {
                    split.dropped.append((key, version))
                } else {
                    split.kept[key, default: []].append(version)
                    split.report.append(GCReport.Kept(version: label(key, version), reasons: reasons.map(\.description)))
                }
            }
            if split.kept[key] == nil { split.kept[key] = [] }
        }
        return split
    }
}
