import Foundation
import PulseCommandLine
import PulseStore

/// `pulse-pack push <package> --to <target>`.
public enum PushCommand {
    public static let command = make(.process)

    /// The command with its process environment injected (tests pass their own).
    public static func make(_ environment: OpsEnvironment) -> Command {
        Command(
            name: "push",
            abstract: "Publish a package's blobs, manifests and index.json to a folder or S3.",
            discussion: """
                Blobs go first (only those the target lacks, each checked against its SHA-256), then manifest \
                files, then index.json: nobody ever sees a manifest naming a missing blob. Key tables and the \
                package secret are never sent. Re-running after an interruption finishes the job.
                Targets: a folder, or s3://bucket/prefix (credentials: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, \
                or ~/.aws/credentials with --profile / AWS_PROFILE). Exit: 0 ok, 1 target failure, 64 usage, 65 bad package.
                """,
            options: [
                .value("to", "<target>", help: "A folder or s3://bucket/prefix."),
                .value("jobs", "<n>", help: "Uploads in flight at once (default 4)."),
            ] + TargetSpec.commonOptions,
            positionals: [Positional("package", help: "The package folder (pulse-pack build output).")],
            run: { arguments in
                try OpsCommand.run(environment) { try push(arguments, environment) }
            })
    }

    static func push(_ arguments: Arguments, _ environment: OpsEnvironment) throws {
        let package = PulsePackage(root: URL(fileURLWithPath: try arguments.required("package")))
        guard let to = arguments.value("to") else { throw UsageError("missing --to <target>") }
        let jobs = try arguments.int("jobs", in: 1...64) ?? 4
        let target = try TargetSpec.parse(to).make(arguments, environment: environment)
        let bar = environment.errorIsTerminal ? ProgressBar(environment.standardError) : nil
        var progress: (@Sendable (PushProgress) -> Void)?
        if let bar { progress = { bar.show($0) } }
        let report = try Pusher(package: package, target: target, jobs: jobs, progress: progress).run()
        bar?.finish()
        if arguments.flag("json") {
            environment.standardOutput(OpsCommand.json([
                "uploaded": report.uploaded, "skipped": report.skipped, "bytes": report.bytes,
                "seconds": (report.seconds * 1000).rounded() / 1000,
            ]))
        } else {
            environment.standardOutput(
                "pushed \(package.root.path) to \(target.displayName): \(report.uploaded) uploaded, "
                    + "\(report.skipped) already there, \(OpsCommand.byteText(report.bytes)) in "
                    + String(format: "%.1f s", report.seconds))
        }
    }
}
