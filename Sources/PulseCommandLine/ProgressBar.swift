import Foundation
import Synchronization

/// The one progress bar of every tool, on standard error when it is a terminal (`Console.showsProgress`):
/// `label [#########.....................] 12/40 blobs, 1.2 MB`, redrawn with `\r` at most ten times a
/// second, and always at the end and when the label changes (the next step of a build or a verify).
public final class ProgressBar: Sendable {
    private let console: Console
    private let lastDraw = Mutex<(label: String, at: ContinuousClock.Instant)?>(nil)

    public init(_ console: Console) {
        self.console = console
    }

    /// Shows `label` (nothing when empty), `done` of `total`, then `detail` (`files, 2.0 kB sent`).
    public func update(_ label: String = "", done: Int, total: Int, detail: String = "") {
        guard console.showsProgress, total > 0 else { return }
        let now = ContinuousClock.now
        let due = lastDraw.withLock { last in
            guard done >= total || last.map({ $0.label != label || now - $0.at >= .milliseconds(100) }) ?? true else { return false }
            last = (label, now)
            return true
        }
        guard due else { return }
        console.drawProgress("\r" + Self.line(label: label, done: done, total: total, detail: detail) + "\u{1b}[K")
    }

    /// Leaves the bar on the screen and ends its line.
    public func finish() { console.keepProgress() }

    /// Removes the bar from the screen.
    public func clear() { console.clearProgress() }

    /// One drawing of the bar: `label [#####.....] done/total detail`.
    public static func line(label: String = "", done: Int, total: Int, detail: String = "", width: Int = 30) -> String {
        let filled = total <= 0 ? width : width * min(max(done, 0), total) / total
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        return (label.isEmpty ? "" : label + " ") + "[\(bar)] \(done)/\(total)" + (detail.isEmpty ? "" : " " + detail)
    }
}
