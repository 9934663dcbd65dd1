import Foundation
import PulseCommandLine
import PulseCore
import PulseStore

/// `pulse-pack diff`.
enum DiffCommand {
    static func command(terminal: Terminal) -> Command {
        Command(
            name: "diff",
            abstract: "Show the delta-sync plan between two manifests: hashes to fetch, to drop, bytes to download.",
            discussion: """
                Give two manifest files, or --package and --session to compare a session's previous version with its \\
                current one (read from the package's server/ part, where session manifests live).
                """,
            options: [
                .flag("json", help: "Print the plan as JSON on stdout."),
                .value("package", "<dir>", help: "A package folder: compare the two newest versions of --session."),
                .value("session", "<id>", help: "The session to compare, with --package."),
            ],
            positionals: [
                Positional("old-manifest", help: "The manifest the phone holds.", optional: true),
                Positional("new-manifest", help: "The manifest it syncs to.", optional: true),
            ],
            run: { arguments in
                let (old, new) = try manifests(arguments)
                let plan = DeltaPlan(old: old, new: new)
                if arguments.flag("json") {
                    terminal.print(String(decoding: plan.json.prettyBytes.dropLast(), as: UTF8.self))
                    return ExitCode.success
                }
                if plan.unchanged {
                    terminal.print("unchanged: same packageVersion (the app gets a 304 and fetches nothing)")
                    return ExitCode.success
                }
                for asset in plan.fetch { terminal.print("+ \(asset.assetHash)  \(Format.bytes(asset.bytes))") }
                for asset in plan.drop { terminal.print("- \(asset.assetHash)  \(Format.bytes(asset.bytes))") }
                terminal.print("fetch \(plan.fetch.count), drop \(plan.drop.count), keep \(plan.kept); download \(Format.bytes(plan.bytes)) (\(plan.bytes) bytes)")
                return ExitCode.success
            })
    }

    /// The old and new manifest: two files, or a session's two newest versions in a package.
    static func manifests(_ arguments: Arguments) throws -> (JSONValue, JSONValue) {
        guard let folder = arguments.value("package") else {
            guard arguments.value("session") == nil else { throw UsageError("--session goes with --package <dir>") }
            return (try readManifest(try arguments.required("old-manifest")), try readManifest(try arguments.required("new-manifest")))
        }
        guard let session = arguments.value("session") else { throw UsageError("--package needs --session <id>") }
        guard arguments.value("old-manifest") == nil else { throw UsageError("give two manifest files, or --package and --session, not both") }
        let package = PulsePackage(root: fileURL(folder))
        let index: PackageIndex
        do { index = try package.readIndex() } catch let error as StoreError { throw InputError(file: error.path, error.message) }
        let versions = index.versions(.sessions, session)
        guard versions.count >= 2 else {
            throw InputError(file: package.indexURL.path, path: "history.sessions/\(session)",
                             versions.isEmpty ? "no such session in the package" : "one version only: nothing to compare")
        }
        let read = { (version: PackageIndex.Version) in
            try readManifest(package.manifestURL(.sessions, id: session, packageVersion: version.packageVersion).path)
        }
        return (try read(versions[1]), try read(versions[0]))
    }

    static func readManifest(_ path: String) throws -> JSONValue {
        let data = try InputLoader.readFile(fileURL(path))
        return try JSONValue.parse(data, file: path)
    }
}
