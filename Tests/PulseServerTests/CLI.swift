import Foundation
import PulseServer
import PulseServerStorage
@testable import PulseServerCLI
import PulseCommandLine

/// Runs the pulse-server CLI in process and captures what it prints.
enum CLI {
    struct Result {
        var code: Int32
        var out: [String]
        var err: [String]
        var text: String { (out + err).joined(separator: "\n") }
    }

    /// Runs with an empty environment: a PULSE_DATABASE_URL set where the tests run must not send
    /// them to that database.
    static func run(_ arguments: [String]) -> Result {
        let capture = Lines()
        let console = Console(out: { capture.add(out: $0) }, err: { capture.add(err: $0) }, environment: [:])
        let code = ServerCommand.main(arguments, console: console)
        return Result(code: code, out: capture.out, err: capture.err)
    }
}

final class Lines: @unchecked Sendable {
    private let lock = NSLock()
    private var outLines: [String] = []
    private var errLines: [String] = []
    func add(out line: String) { lock.withLock { outLines += line.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) } }
    func add(err line: String) { lock.withLock { errLines += line.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) } }
    var out: [String] { lock.withLock { outLines } }
    var err: [String] { lock.withLock { errLines } }

    /// Collects `handle`'s lines into `err` on a thread of its own until the writer closes it. The thread
    /// holds only these lines, so whoever owns the process can be dropped (and stop it) meanwhile.
    func readErr(from handle: FileHandle) {
        Thread { [self] in
            var pending = Data()
            while true {
                let data = handle.availableData
                if data.isEmpty { return }
                pending += data
                while let newline = pending.firstIndex(of: 0x0a) {
                    add(err: String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending = pending[(newline + 1)...]
                }
            }
        }.start()
    }
}
