import Foundation
import PulseCommandLine
import PulseCore
import PulseSystem

/// Output of the CLI: results to stdout, diagnostics and progress to stderr.
public final class Terminal: @unchecked Sendable {
    private let lock = NSLock()
    private let out: (String) -> Void
    private let err: (String) -> Void
    /// Draw progress bars (stderr is a terminal and not disabled).
    let showsProgress: Bool
    private var progressDrawn = false
    private var lastDrawn: (label: String, filled: Int, done: Int)?

    public init(out: @escaping (String) -> Void, err: @escaping (String) -> Void, showsProgress: Bool) {
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

    public func print(_ line: String) { lock.withLock { clearProgress(); out(line) } }
    public func printError(_ line: String) { lock.withLock { clearProgress(); err(line) } }

    /// Redraws a one-line progress bar: `label [#####.....]  12/22`.
    func progress(_ label: String, done: Int, total: Int) {
        guard showsProgress, total > 0 else { return }
        lock.withLock {
            let width = 30
            let filled = done * width / total
            // Redraw when the bar grows, at the end, or every 1% — not once per slide of a long deck.
            if let last = lastDrawn, last.label == label, last.filled == filled, done != total, done - last.done < max(1, total / 100) {
                return
            }
            lastDrawn = (label, filled, done)
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            FileHandle.standardError.write(Data("\r\(label) [\(bar)] \(done)/\(total)".utf8))
            progressDrawn = true
        }
    }

    func endProgress() { lock.withLock { clearProgress() } }

    private func clearProgress() {
        guard progressDrawn else { return }
        FileHandle.standardError.write(Data("\r\u{1b}[K".utf8))
        progressDrawn = false
    }
}

/// Formatting helpers for summaries.
enum Format {
    /// SI units, as every tool prints them (`ByteCount`).
    static func bytes(_ count: Int) -> String { ByteCount.format(count) }

    static func seconds(_ value: Double) -> String { String(format: "%.2f s", value) }

    static func short(_ hash: String) -> String { String(hash.prefix(12)) }
}
