import Foundation
import Synchronization

/// A one-line progress bar redrawn with `\r` on standard error (only used when it is a terminal),
/// at most ten times a second.
final class ProgressBar: Sendable {
    private let write: @Sendable (String) -> Void
    private let lastDraw = Mutex<Date?>(nil)

    init(_ write: @escaping @Sendable (String) -> Void) {
        self.write = write
    }

    func show(_ progress: PushProgress) {
        let now = Date()
        let due = lastDraw.withLock { last in
            guard progress.done == progress.total || last.map({ now.timeIntervalSince($0) >= 0.1 }) ?? true else { return false }
            last = now
            return true
        }
        guard due else { return }
        write("\r" + Self.line(progress))
    }

    func finish() { write("\n") }

    static func line(_ progress: PushProgress, width: Int = 30) -> String {
        let filled = progress.total == 0 ? width : width * progress.done / progress.total
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        return "[\(bar)] \(progress.done)/\(progress.total) files, \(OpsCommand.byteText(progress.bytes)) sent"
    }
}
