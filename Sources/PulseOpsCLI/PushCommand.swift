import Foundation
import PulseCommandLine
import PulseCore
import PulseOps
import PulseStore

/// `pulse-pack push <package> --to <target>`.
public enum PushCommand {
    public static let command = make(.process)

    static let to = Option.value("to", "<target>", help: "A folder or s3://bucket/prefix.").required()
    static let jobs = Option.int("jobs", "<n>", in: 1...64, help: "Uploads in flight at once (default 4).")
    static let force = Option.flag(
        "force", help: "Push even if the target's index.json belongs to another package, or the target holds other files.")
    static let package = Positional.one("package", help: "The package folder (pulse-pack build output).")

    /// The command with its process environment injected (tests pass their own).
    public static func make(_ environment: OpsEnvironment) -> Command {
        Command(
            name: "push",
            abstract: "Publish a package's public part (blobs, blob lists, app configs, index.json) to a folder or S3.",
            discussion: """
                Sends <package>/public/ only: manifests, gated resources and key tables (server/) and the package \
                secret never leave. One listing tells what the target has; blobs go first (only those it lacks, \
                each checked against its SHA-256, sent with Content-MD5 and x-amz-checksum-sha256, the answer's ETag \
                checked), then a listing must show every one with its size; then blob lists and app configs; then \
                index.json, the commit point: nobody ever sees an index naming a missing file. A push that changes \
                the target holds its lease (.pulse-lease on S3, an flock on .lock in a folder), so no gc of \
                the same target runs meanwhile. A target holding another package, or with no index.json but other \
                files, is refused unless --force. Re-running after an interruption finishes the job.
                Targets: a folder, or s3://bucket/prefix (credentials: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, \
                or ~/.aws/credentials with --profile / AWS_PROFILE). Exit: 0 ok, 1 target failure, 64 usage, \
                65 bad package or foreign target, 75 another push or gc holds the target (see --wait).

                EXAMPLES:
                  pulse-pack push out/pkg --to /srv/origin/pulse
                  pulse-pack push out/pkg --to s3://media/pulse --endpoint https://s3.eu-central-1.amazonaws.com \\
                      --region eu-central-1 --profile media --json
                  pulse-pack push out/pkg --to s3://media/pulse --wait 10m    # queue behind a running gc
                """,
            options: [to, jobs, force] + TargetSpec.commonOptions,
            positionals: [package],
            validate: { arguments in try TargetSpec.parse(arguments[Self.to]).validate(arguments, environment: environment) },
            run: { arguments in
                try OpsCommand.run(environment) { try push(arguments, environment) }
            })
    }

    static func push(_ arguments: Arguments, _ environment: OpsEnvironment) throws {
        let package = URL(fileURLWithPath: arguments[Self.package]).standardizedFileURL
        let target = try TargetSpec.parse(arguments[Self.to]).make(arguments, environment: environment)
        let bar = ProgressBar(environment.console)
        let progress: @Sendable (PushProgress) -> Void = { progress in
            bar.update(done: progress.done, total: progress.total, detail: "files, \(OpsCommand.byteText(progress.bytes)) sent")
        }
        let pusher = Pusher(
            package: package, target: target, jobs: arguments[Self.jobs] ?? 4, force: arguments[Self.force],
            wait: arguments[TargetSpec.wait] ?? 0, progress: environment.console.showsProgress ? progress : nil)
        let report: PushReport
        do { report = try pusher.run() } catch {
            bar.finish()
            throw error
        }
        bar.finish()
        if arguments[TargetSpec.json] {
            environment.console.out(OpsCommand.json([
                "uploaded": .int(report.uploaded), "skipped": .int(report.skipped), "bytes": .int(report.bytes),
                "seconds": OpsCommand.seconds(report.seconds),
            ]))
        } else {
            environment.console.out(
                "pushed \(package.path) to \(target.displayName): \(report.uploaded) uploaded, "
                    + "\(report.skipped) already there, \(OpsCommand.byteText(report.bytes)) in "
                    + String(format: "%.1f s", report.seconds))
        }
    }
}
