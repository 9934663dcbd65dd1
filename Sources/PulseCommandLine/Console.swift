import Foundation
import PulseCore
import PulseSystem
import Synchronization

/// Where every tool writes, and what it reads from its process: lines of results on standard output,
/// notes and errors on standard error (each line written at once, no stdio buffering: `pulse-device watch`
/// is read line by line while it runs), raw bytes on standard output (`--out -`), a progress bar on standard
/// error when it is a terminal, and the environment. Tests make one with closures that capture it all.
public final class Console: Sendable {
    private let writeOut: @Sendable (String) -> Void
    private let writeErr: @Sendable (String) -> Void
    private let writeBytes: @Sendable ([UInt8]) throws -> Void
    /// Writes progress text on standard error as it is (`\r`, no newline); nil when it is not a terminal.
    let writeProgress: (@Sendable (String) -> Void)?
    public let environment: [String: String]
    /// A progress bar is on the screen: the next line clears it first.
    private let progressShown = Mutex(false)

    /// - Parameters:
    ///   - out: writes one line on standard output.
    ///   - err: writes one line on standard error.
    ///   - write: writes raw bytes on standard output (by default the bytes as text through `out`).
    ///   - progress: writes progress text on standard error as is; nil: no progress bars.
    public init(
        out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void,
        write: (@Sendable ([UInt8]) throws -> Void)? = nil, progress: (@Sendable (String) -> Void)? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        writeOut = out
        writeErr = err
        writeBytes = write ?? { out(String(decoding: $0, as: UTF8.self)) }
        writeProgress = progress
        self.environment = environment
    }

    /// The process's own standard output and error; progress bars when standard error is a terminal
    /// (and `TERM` is not `dumb`).
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> Console {
        var progress: (@Sendable (String) -> Void)?
        if File.standardError.isTerminal && environment["TERM"] != "dumb" {
            progress = { text in FileHandle.standardError.write(Data(text.utf8)) }
        }
        return Console(
            out: { FileHandle.standardOutput.write(Data(($0 + "\n").utf8)) },
            err: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) },
            write: { bytes in try FileHandle.standardOutput.write(contentsOf: bytes) },
            progress: progress,
            environment: environment)
    }

    /// One line on standard output (a progress bar on the screen is cleared first).
    public func out(_ line: String) {
        clearProgress()
        writeOut(line)
    }

    /// One line on standard error (a progress bar on the screen is cleared first).
    public func err(_ line: String) {
        clearProgress()
        writeErr(line)
    }

    /// Raw bytes on standard output.
    public func write(_ bytes: [UInt8]) throws { try writeBytes(bytes) }

    /// `value` as pretty JSON on standard output (one document, no trailing blank line).
    public func out(json value: JSONValue) {
        out(String(decoding: value.prettyBytes.dropLast(), as: UTF8.self))
    }

    /// A list command's output: a JSON array with `--json`, else a line for each item.
    public func list<Item>(_ items: [Item], asJSON: Bool, json: (Item) -> JSONValue, line: (Item) -> String) {
        if asJSON {
            out(json: .array(items.map(json)))
        } else {
            for item in items { out(line(item)) }
        }
    }

    /// Progress bars are drawn (standard error is a terminal).
    public var showsProgress: Bool { writeProgress != nil }

    /// Draws progress text (`ProgressBar`); it stays until the next line or `clearProgress`.
    func drawProgress(_ text: String) {
        guard let writeProgress else { return }
        progressShown.withLock { $0 = true }
        writeProgress(text)
    }

    /// Ends the line of a progress bar on the screen, leaving it there.
    func keepProgress() {
        guard let writeProgress, progressShown.withLock({ shown in defer { shown = false }; return shown }) else { return }
        writeProgress("\n")
    }

    /// Removes a progress bar from the screen, if one is there.
    public func clearProgress() {
        guard let writeProgress, progressShown.withLock({ shown in defer { shown = false }; return shown }) else { return }
        writeProgress("\r\u{1b}[K")
    }
}
