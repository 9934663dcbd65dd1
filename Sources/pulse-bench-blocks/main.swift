// Measurements of the console's and the metrics' building blocks, for Scripts/bench/blocks. Not tests:
// they print figures, each next to a baseline measured in the same run.
//
//   pulse-bench-blocks html [--rows N] [--runs N]
//       PulseHTML: build and render a table of N device rows, against the same bytes written by hand.
//   pulse-bench-blocks html --count N [--by-hand]
//       Only build and render the table N times (or write it by hand), no clock, for callgrind.
//   pulse-bench-blocks metrics [--operations N] [--runs N]
//       PulseMetrics: ns per operation on 1 and 2 threads, against a bare Atomic and a Mutex.
//   pulse-bench-blocks metrics --count N
//       N of each hot-path operation on one thread, no clock (valgrind counts the allocations).
import Foundation
import PulseCommandLine

let html = Command(
    name: "html", abstract: "PulseHTML: a device table built and rendered, next to the same bytes appended by hand.",
    options: [
        .value("rows", "<n>", help: "Rows in the table (default 10000)."),
        .value("runs", "<n>", help: "Measurements; the median is reported (default 21)."),
        .value("count", "<n>", help: "Only build and render the table n times, no clock (for callgrind)."),
        .flag("by-hand", help: "With --count: the hand-written bytes instead of the builder."),
    ],
    run: { arguments in
        let bench = HTMLBench(rows: try arguments.int("rows", in: 1...1_000_000) ?? 10_000, runs: try arguments.int("runs", in: 1...1000) ?? 21)
        if let count = try arguments.int("count", in: 1...1_000_000) { return bench.count(count, byHand: arguments.flag("by-hand")) }
        return try bench.run()
    })

let metrics = Command(
    name: "metrics", abstract: "PulseMetrics: ns per hot-path operation on 1 and 2 threads, next to a bare Atomic and a Mutex.",
    options: [
        .value("operations", "<n>", help: "Operations per thread per measurement (default 5000000)."),
        .value("runs", "<n>", help: "Measurements; the median is reported (default 5)."),
        .value("count", "<n>", help: "Only run n of each operation on one thread, no clock (for valgrind)."),
    ],
    run: { arguments in
        let bench = MetricsBench(
            operations: try arguments.int("operations", in: 1000...1_000_000_000) ?? 5_000_000, runs: try arguments.int("runs", in: 1...100) ?? 5)
        if let count = try arguments.int("count", in: 1...1_000_000_000) { return bench.count(count) }
        return bench.run()
    })

let root = Command(
    name: "pulse-bench-blocks", abstract: "Measurements of PulseHTML and PulseMetrics (Scripts/bench/blocks).",
    examples: ["pulse-bench-blocks html --rows 10000", "pulse-bench-blocks metrics --operations 5000000"], subcommands: [html, metrics])

exit(CommandLineTool.main(root, arguments: Array(CommandLine.arguments.dropFirst()), errorHandler: { error in
    FileHandle.standardError.write(Data("pulse-bench-blocks: error: \(error)\n".utf8))
    return ExitCode.failure
}))
