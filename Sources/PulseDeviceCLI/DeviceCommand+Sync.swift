import Foundation
import PulseCommandLine
import PulseCore
import PulseDevice

extension DeviceCommand {
    /// `sync [--session ID | --series ID] [--assets-url URL] [--parallel N] [--json]`
    static let syncSeries = Option.value("series", "<id>", help: "A series and every session it lists.")
    static let syncParallel = Option.int("parallel", "<n>", in: 1...64, help: "Blob downloads at once (default 4).")
    static let statusVerify = Option.flag("verify", help: "Check every cached blob against its name and manifest (exit 1 on a problem).")

    static func syncCommand(console: Console) -> Command {
        Command(
            name: "sync",
            abstract: "Pre-cache a session or series: a conditional manifest GET, then only the blobs the cache lacks.",
            discussion: """
                304 means nothing to fetch. Otherwise the blobs the cache lacks are fetched in parallel (from the server or
                --assets-url), a partial download resumes with Range/If-Range, every blob is checked against its SHA-256
                before it is kept (ciphertext exactly as served), the manifest is committed once all its blobs are there,
                then blobs no cached manifest names any more are dropped. A sync killed at any moment leaves the previous
                cache usable. Prints what the delta cost: requests, bytes fetched against the full deck. Without
                --session or --series: the device's own scope.
                """,
            examples: [
                "pulse-device sync --device-dir dev1 --series devconf-2026 --assets-url https://cdn.example.net",
                "pulse-device sync --device-dir dev1 --session keynote --json",
            ],
            options: [deviceDirOption, sessionOption, syncSeries, assetsOption, syncParallel, serverOption, skewOption, jsonOption],
            validate: { arguments in
                guard arguments[sessionOption] == nil || arguments[syncSeries] == nil else { throw UsageError("give --session or --series, not both") }
                try validateDevice(arguments)
            },
            run: { arguments in
                let parallel = arguments[syncParallel] ?? 4
                let context = try Context(arguments, connections: parallel)
                defer { context.transport.invalidate() }
                let target: Syncer.Target
                if let session = arguments[sessionOption] {
                    target = .session(session)
                } else if let series = arguments[syncSeries] {
                    target = .series(series)
                } else {
                    target = context.identity.scopeKind == "series" ? .series(context.identity.scopeId) : .session(context.identity.scopeId)
                }
                let bar = ProgressBar(console)
                let progress: @Sendable (SyncProgress) -> Void = { progress in
                    bar.update(progress.label, done: progress.done, total: progress.total, detail: "blobs, \(ByteCount.format(progress.bytes))")
                }
                let syncer = Syncer(
                    cache: context.cache, client: context.client, assetsBase: try context.assetsBase(arguments), parallel: parallel,
                    progress: arguments[jsonOption] || !console.showsProgress ? nil : progress)
                let report = try syncer.sync(target)
                bar.clear()
                if arguments[jsonOption] {
                    console.out(line(report.json))
                } else {
                    report.textLines.forEach(console.out)
                }
                report.refusals.forEach { console.err("pulse-device: error: \($0)") }
                return report.refusals.isEmpty ? ExitCode.success : ExitCode.failure
            })
    }

    /// `status [--verify] [--json]`
    static func statusCommand(console: Console) -> Command {
        Command(
            name: "status",
            abstract: "Show the device's identity and what it has cached; --verify re-hashes every blob.",
            options: [deviceDirOption, statusVerify, jsonOption],
            validate: { arguments in _ = try folderPath(arguments) },
            run: { arguments in
                let folder = try DeviceFolder.open(try folderPath(arguments))
                let identity = try folder.identity()
                let cache = DeviceCache(folder: folder)
                var manifests: [JSONValue] = []
                var lines = ["device \(identity.deviceId) (\(identity.name), \(identity.platform)) for \(identity.scopeKind) \(identity.scopeId) with \(identity.server)"]
                for key in try cache.cachedKeys() {
                    guard let cached = try cache.manifest(key, in: try cache.readIndex()) else { continue }
                    let manifest = cached.manifest
                    let present = manifest.assets.filter(cache.hasBlob).count
                    var fields: [String: JSONValue] = ["key": .string(key), "assets": .int(manifest.assets.count), "cachedAssets": .int(present)]
                    if let version = manifest.packageVersion { fields["packageVersion"] = .string(version) }
                    if let deck = manifest.deckVersion { fields["deckVersion"] = .int(deck) }
                    manifests.append(.object(fields))
                    let deck = manifest.deckVersion.map { ", deckVersion \($0), \(manifest.slides.count) slides" } ?? ""
                    lines.append("  \(key): packageVersion \(manifest.packageVersion?.prefix(12) ?? "?")…\(deck), \(present)/\(manifest.assets.count) assets cached")
                }
                let blobs = (try? FileManager.default.contentsOfDirectory(atPath: folder.blobsURL.path))?.count ?? 0
                lines.append("  \(blobs) blobs in \(folder.blobsURL.path)")
                let answers = try AnswerState.read(folder.answersURL)
                let trusted = (try? AnswerCheck.trustedKeys(answers)) ?? []
                switch answers.signs {
                case true?:
                    lines.append("  signed answers required: \(trusted.count) trusted answer key\(trusted.count == 1 ? "" : "s"), "
                        + "\(answers.answers.count) requests recorded, latest verified server time \(answers.verifiedTime)")
                case false?: lines.append("  the server does not sign its answers (GET /api/sync/answer-keys answered 404 at enrollment)")
                case nil: lines.append("  signed answers: not asked yet (the next answer with a Pulse-Signature starts trust on first use)")
                }
                let problems = arguments[statusVerify] ? cache.check() : []
                if arguments[jsonOption] {
                    var fields: [String: JSONValue] = [
                        "deviceId": .string(identity.deviceId), "server": .string(identity.server),
                        "scope": ["kind": .string(identity.scopeKind), "id": .string(identity.scopeId)], "manifests": .array(manifests), "blobs": .int(blobs),
                        "answers": [
                            "signs": answers.signs.map(JSONValue.bool) ?? .null, "trustedKeys": .array(trusted.map { .string($0.kid) }),
                            "recorded": .int(answers.answers.count), "verifiedTime": .int(answers.verifiedTime),
                        ],
                    ]
                    if arguments[statusVerify] { fields["problems"] = .array(problems.map { .string($0) }) }
                    console.out(line(.object(fields)))
                } else {
                    lines.forEach(console.out)
                    if arguments[statusVerify] { console.out(problems.isEmpty ? "  verified: every cached manifest and blob is whole" : "  \(problems.count) problems:") }
                    problems.forEach { console.out("    \($0)") }
                }
                return problems.isEmpty ? ExitCode.success : ExitCode.failure
            })
    }
}

extension SyncReport {
    /// The text summary: a line per manifest, then the cost.
    var textLines: [String] {
        var lines: [String] = []
        for item in items {
            var text = "\(item.kind) \(item.id): \(item.outcome.rawValue)"
            if let deck = item.deckVersion { text += ", deckVersion \(deck)" }
            if item.outcome == .unchanged && item.blobsFetched == 0 {
                text += ", all \(item.assets) assets cached"
            } else if item.assets > 0 {
                text += ": fetched \(item.blobsFetched) of \(item.assets) assets (\(ByteCount.format(item.blobBytesFetched)) of \(ByteCount.format(item.assetBytes)))"
                if item.resumedBytes > 0 { text += ", \(ByteCount.format(item.resumedBytes)) resumed" }
            }
            lines.append(text)
        }
        let share = fullBytes > 0 ? String(format: ", %.1f %%", Double(blobBytesFetched) * 100 / Double(fullBytes)) : ""
        var cost = "sync: \(Self.count(requests, "request")), \(ByteCount.format(bytes)) received in \(String(format: "%.2f", seconds)) s; "
            + "\(Self.count(blobsFetched, "blob")) fetched (\(ByteCount.format(blobBytesFetched)) of the full \(ByteCount.format(fullBytes))\(share)), "
            + "\(blobsReused) already cached"
        if garbage.blobs > 0 { cost += ", \(Self.count(garbage.blobs, "blob")) dropped (\(ByteCount.format(garbage.bytes)))" }
        lines.append(cost)
        return lines
    }

    static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
}
