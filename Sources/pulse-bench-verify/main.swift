// ES256 verification throughput of PulseCrypto, for Scripts/bench/verify (which runs it next to
// `openssl speed ecdsap256`). Not a test: it prints a measurement.
//
//   pulse-bench-verify [--threads N] [--seconds S]
//   pulse-bench-verify --count N        (N verifies, no timing: for callgrind)
//
// One key is parsed once (as the server caches a device's key), then N threads verify 64 different
// signed request strings round-robin for S seconds. Prints one line:
//   threads=N seconds=S verifies=V per_second=R per_cpu_second=C
// (R by the wall clock; C summed over threads, each by its own CPU time.)
import Foundation
import PulseCommandLine
import PulseCrypto
import PulseSystem
import Synchronization

/// The options, declared once like every Pulse tool's: `--help`, `--version`, and one clear line for a typo.
enum Options {
    static let threads = Option.int("threads", "<n>", in: 1...256, help: "Threads verifying at once (default 1).")
    static let seconds = Option.int("seconds", "<s>", in: 1...3600, help: "How long to run (default 3).")
    static let count = Option.int("count", "<n>", in: 1...100_000_000, help: "Exactly n verifies on one thread, no clock (for callgrind).")
}

let command = Command(
    name: "pulse-bench-verify",
    abstract: "ES256 verifies per second of PulseCrypto (Scripts/bench/verify runs it next to openssl speed).",
    examples: ["pulse-bench-verify --threads 2 --seconds 3", "valgrind --tool=callgrind pulse-bench-verify --count 300"],
    options: [Options.threads, Options.seconds, Options.count],
    run: { _ in ExitCode.success })

let (threads, seconds, count): (Int, Double, Int)
do {
    let given = Array(CommandLine.arguments.dropFirst())
    if given.first == "--version" {
        print("\(command.name) \(ToolVersion.current)")
        exit(ExitCode.success)
    }
    guard let arguments = try CommandLineTool.parse(given, for: command) else {
        print(CommandLineTool.help(for: command, path: [command.name]))
        exit(ExitCode.success)
    }
    threads = arguments[Options.threads] ?? 1
    seconds = Double(arguments[Options.seconds] ?? 3)
    // --count N: exactly N verifies on this thread, no clock (for valgrind --tool=callgrind).
    count = arguments[Options.count] ?? 0
} catch let error as UsageError {
    FileHandle.standardError.write(Data("pulse-bench-verify: error: \(error.message)\nSee 'pulse-bench-verify --help'.\n".utf8))
    exit(ExitCode.usage)
}

let key = try P256.PrivateKey()
let messages: [[UInt8]] = (0..<64).map { index in
    Array("GET\n/api/sync/keys\nsession=keynote-\(index)\n\(1_700_000_000 + index)\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855".utf8)
}
let signatures = try messages.map { try key.signature(for: $0) }
let publicKey = try P256.PublicKey(derRepresentation: key.publicKey.derRepresentation)

if count > 0 {
    var failed = 0
    for index in 0..<count where !publicKey.isValidSignature(signatures[index & 63], for: messages[index & 63]) { failed += 1 }
    print("count=\(count) failed=\(failed)")
    exit(failed == 0 ? 0 : 1)
}

final class Counter: Sendable {
    struct Totals {
        var verified = 0
        var failed = 0
        /// Sum over threads of verifies per second of that thread's CPU time: how fast the code is
        /// when it gets a core, whatever else shares the machine (Scripts/bench/verify compares the
        /// wall-clock rate, per_second, with openssl).
        var perCPUSecond = 0.0
    }

    private let state = Mutex(Totals())

    func add(_ verified: Int, _ failed: Int, cpuSeconds: Double) {
        state.withLock { totals in
            totals.verified += verified
            totals.failed += failed
            totals.perCPUSecond += Double(verified) / cpuSeconds
        }
    }

    var totals: Totals { state.withLock { $0 } }
}

/// CPU time used by the calling thread, in seconds.
func threadCPUSeconds() -> Double { SystemClock.threadCPUSeconds() }

let counter = Counter()
let start = DispatchTime.now().uptimeNanoseconds
let deadline = start + UInt64(seconds * 1e9)
let group = DispatchGroup()
for worker in 0..<threads {
    group.enter()
    let thread = Thread {
        let cpuStart = threadCPUSeconds()
        var verified = 0, failed = 0
        var index = worker * 17
        while true {
            for _ in 0..<64 {
                let slot = index & 63
                if publicKey.isValidSignature(signatures[slot], for: messages[slot]) { verified += 1 } else { failed += 1 }
                index += 1
            }
            if DispatchTime.now().uptimeNanoseconds >= deadline { break }
        }
        counter.add(verified, failed, cpuSeconds: threadCPUSeconds() - cpuStart)
        group.leave()
    }
    thread.start()
}
group.wait()
let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
let totals = counter.totals
guard totals.failed == 0 else {
    FileHandle.standardError.write(Data("pulse-bench-verify: \(totals.failed) valid signatures did not verify\n".utf8))
    exit(1)
}
print("threads=\(threads) seconds=\(String(format: "%.2f", elapsed)) verifies=\(totals.verified)"
      + " per_second=\(String(format: "%.0f", Double(totals.verified) / elapsed))"
      + " per_cpu_second=\(String(format: "%.0f", totals.perCPUSecond))")
