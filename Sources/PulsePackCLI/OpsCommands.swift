import Foundation
import PulseCommandLine
import PulseSystem

/// `push` and `gc` run in the `pulse-pack-ops` executable, installed next to `pulse-pack`.
///
/// They speak HTTP through FoundationNetworking, which loads libcurl and some thirty libraries behind it
/// at every start: about 10 ms, more than a third of what packaging a 300-slide PDF costs otherwise.
/// Keeping them in their own executable (git does the same with `git-remote-https`) spares every
/// `build`, `verify`, `diff` and `keys` that start-up. `pulse-pack push …` replaces itself with
/// `pulse-pack-ops push …` (same pid: exit status, Ctrl-C and `kill` behave as if it were one program).
public enum OpsCommands {
    public static let helperName = "pulse-pack-ops"

    /// Their lines in `pulse-pack --help` (the full help comes from the helper).
    static let listing: [Command] = [
        Command(name: "push", abstract: "Publish a package's public part (blobs, blob lists, app configs, index.json) to a folder or S3."),
        Command(name: "gc", abstract: "Delete old versions, the blobs no kept version names, and stale temp files."),
    ]

    /// The helper's arguments if `arguments` (without the program name) ask for push or gc
    /// (`push …`, `gc …`, `help push`), else nil.
    public static func forwarded(_ arguments: [String]) -> [String]? {
        let names = listing.map(\.name)
        guard let first = arguments.first else { return nil }
        if names.contains(first) { return arguments }
        if first == "help", arguments.count == 2, names.contains(arguments[1]) { return [arguments[1], "--help"] }
        return nil
    }

    /// Runs the helper next to this executable with `arguments` in place of this process. Returns only
    /// if it could not be started: prints why and returns exit code 1.
    public static func exec(_ arguments: [String], printError: (String) -> Void) -> Int32 {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let helper = URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent(helperName).path
        let reason = ProcessImage.replace(with: helper, arguments: ["pulse-pack"] + arguments)
        printError("pulse-pack: error: cannot run \(helper) (\(reason)); push and gc need \(helperName) installed next to pulse-pack")
        return ExitCode.failure
    }
}
