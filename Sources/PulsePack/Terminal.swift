import Foundation
import PulseCommandLine
import PulseSystem
import Synchronization

/// Output of the CLI: results to stdout, diagnostics and progress to stderr.
public final class Terminal: Sendable {
    private struct Progress {
        var drawn = false
        var lastDrawn: (label: String, filled: Int, done: Int)?

        mutating func clear() {
            guard drawn else { return }
            FileHandle.standardError.write(Data("\r\u{1b}[K".utf8))
            drawn = false
        }
    }

    private let out: @Sendable (String) -> Void
    private let err: @Sendable (String) -> Void
    /// Draw progress bars (stderr is a terminal and not disabled).
    let showsProgress: Bool
    /// Held while a line is written, so lines and the bar never interleave.
    private let progressState = Mutex(Progress())

    public init(out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void, showsProgress: Bool) {
        self.out = out
        self.err = err
        self.showsProgress = showsProgress
    }

    /// The process's own stdout and stderr.
    public static func standard() -> Terminal {
        Terminal(
            out: { FileHandle.standardOutput.write(Data(($0 + "\n").utf8)) },
            err: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) },
            showsProgress: File.standardError.isTerminal && ProcessInfo.processInfo.environment["TERM"] != "dumb")
    }

    public func print(_ line: String) { progressState.withLock { $0.clear(); out(line) } }
    public func printError(_ line: String) { progressState.withLock { $0.clear(); err(line) } }

    /// Redraws a one-line progress bar: `label [#####.....]  12/22`.
    func progress(_ label: String, done: Int, total: Int) {
        guard showsProgress, total > 0 else { return }
        progressState.withLock { state in
            let width = 30
            let filled = done * width / total
            // Redraw when the bar grows, at the end, or every 1% — not once per slide of a long deck.
            if let last = state.lastDrawn, last.label == label, last.filled == filled, done != total, done - last.done < max(1, total / 100) {
                return
            }
            state.lastDrawn = (label, filled, done)
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            FileHandle.standardError.write(Data("\r\(label) [\(bar)] \(done)/\(total)".utf8))
            state.drawn = true
        }
    }

    func endProgress() { progressState.withLock { $0.clear() } }
}

/// Formatting helpers for summaries.
enum Format {
    /// SI units, as every tool prints them (`ByteCount`).
    static func bytes(_ count: Int) -> String { ByteCount.format(count) }

    static func seconds(_ value: Double) -> String { String(format: "%.2f s", value) }

    static func short(_ hash: String) -> String { String(hash.prefix(12)) }
}
