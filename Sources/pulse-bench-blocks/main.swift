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

enum HTMLOptions {
    static let rows = Option.int("rows", "<n>", in: 1...1_000_000, help: "Rows in the table (default 10000).")
    static let runs = Option.int("runs", "<n>", in: 1...1000, help: "Measurements; the median is reported (default 21).")
    static let count = Option.int("count", "<n>", in: 1...1_000_000, help: "Only build and render the table n times, no clock (for callgrind).")
    static let byHand = Option.flag("by-hand", help: "With --count: the hand-written bytes instead of the builder.")
}

let html = Command(
    name: "html", abstract: "PulseHTML: a device table built and rendered, next to the same bytes appended by hand.",
    options: [HTMLOptions.rows, HTMLOptions.runs, HTMLOptions.count, HTMLOptions.byHand],
    run: { arguments in
        let bench = HTMLBench(rows: arguments[HTMLOptions.rows] ?? 10_000, runs: arguments[HTMLOptions.runs] ?? 21)
        if let count = arguments[HTMLOptions.count] { return bench.count(count, byHand: arguments[HTMLOptions.byHand]) }
        return try bench.run()
    })

enum MetricsOptions {
    static let operations = Option.int(
        "operations", "<n>", in: 1000...1_000_000_000, help: "Operations per thread per measurement (default 5000000).")
    static let runs = Option.int("runs", "<n>", in: 1...100, help: "Measurements; the median is reported (default 5).")
    static let count = Option.int("count", "<n>", in: 1...1_000_000_000, help: "Only run n of each operation on one thread, no clock (for valgrind).")
}

let metrics = Command(
    name: "metrics", abstract: "PulseMetrics: ns per hot-path operation on 1 and 2 threads, next to a bare Atomic and a Mutex.",
    options: [MetricsOptions.operations, MetricsOptions.runs, MetricsOptions.count],
    run: { arguments in
        let bench = MetricsBench(operations: arguments[MetricsOptions.operations] ?? 5_000_000, runs: arguments[MetricsOptions.runs] ?? 5)
        if let count = arguments[MetricsOptions.count] { return bench.count(count) }
        return bench.run()
    })

let root = Command(
    name: "pulse-bench-blocks", abstract: "Measurements of PulseHTML and PulseMetrics (Scripts/bench/blocks).",
    examples: ["pulse-bench-blocks html --rows 10000", "pulse-bench-blocks metrics --operations 5000000"], subcommands: [html, metrics])

exit(CommandLineTool.main(root, arguments: Array(CommandLine.arguments.dropFirst()), errorHandler: { error in
    FileHandle.standardError.write(Data("pulse-bench-blocks: error: \(error)\n".utf8))
    return ExitCode.failure
}))
