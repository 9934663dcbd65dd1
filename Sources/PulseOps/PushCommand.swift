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
            abstract: "Publish a package's public part (blobs, blob lists, app configs, index.json) to a folder or S3.",
            discussion: """
                Sends <package>/public/ only: manifests, gated resources and key tables (server/) and the package \
                secret never leave. Blobs go first (only those the target lacks, each checked against its SHA-256), \
                then blob lists and app configs, then index.json: nobody ever sees an index naming a missing file. \
                A target holding another package (another package id) is refused unless --force. \
                Re-running after an interruption finishes the job.
                Targets: a folder, or s3://bucket/prefix (credentials: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, \
                or ~/.aws/credentials with --profile / AWS_PROFILE). Exit: 0 ok, 1 target failure, 64 usage, 65 bad package.
                """,
            options: [
                .value("to", "<target>", help: "A folder or s3://bucket/prefix."),
                .value("jobs", "<n>", help: "Uploads in flight at once (default 4)."),
                .flag("force", help: "Push even if the target's index.json belongs to another package."),
            ] + TargetSpec.commonOptions,
            positionals: [Positional("package", help: "The package folder (pulse-pack build output).")],
            run: { arguments in
                try OpsCommand.run(environment) { try push(arguments, environment) }
            })
    }

    static func push(_ arguments: Arguments, _ environment: OpsEnvironment) throws {
        let package = URL(fileURLWithPath: try arguments.required("package")).standardizedFileURL
        guard let to = arguments.value("to") else { throw UsageError("missing --to <target>") }
        let jobs = try arguments.int("jobs", in: 1...64) ?? 4
        let target = try TargetSpec.parse(to).make(arguments, environment: environment)
        let bar = environment.errorIsTerminal ? ProgressBar(environment.standardError) : nil
        var progress: (@Sendable (PushProgress) -> Void)?
        if let bar { progress = { bar.show($0) } }
        let report = try Pusher(package: package, target: target, jobs: jobs, force: arguments.flag("force"), progress: progress).run()
        bar?.finish()
        if arguments.flag("json") {
            environment.standardOutput(OpsCommand.json([
                "uploaded": report.uploaded, "skipped": report.skipped, "bytes": report.bytes,
                "seconds": (report.seconds * 1000).rounded() / 1000,
            ]))
        } else {
            environment.standardOutput(
                "pushed \(package.path) to \(target.displayName): \(report.uploaded) uploaded, "
                    + "\(report.skipped) already there, \(OpsCommand.byteText(report.bytes)) in "
                    + String(format: "%.1f s", report.seconds))
        }
    }
}
