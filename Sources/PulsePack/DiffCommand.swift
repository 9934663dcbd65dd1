import Foundation
import PulseCommandLine
import PulseCore

/// `pulse-pack diff`.
enum DiffCommand {
    static func command(terminal: Terminal) -> Command {
        Command(
            name: "diff",
            abstract: "Show the delta-sync plan between two manifests: hashes to fetch, to drop, bytes to download.",
            options: [.flag("json", help: "Print the plan as JSON on stdout.")],
            positionals: [
                Positional("old-manifest", help: "The manifest the phone holds."),
                Positional("new-manifest", help: "The manifest it syncs to."),
            ],
            run: { arguments in
                let old = try readManifest(try arguments.required("old-manifest"))
                let new = try readManifest(try arguments.required("new-manifest"))
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

    static func readManifest(_ path: String) throws -> JSONValue {
        let data = try InputLoader.readFile(fileURL(path))
        do { return try JSONValue.parse(data) } catch { throw InputError(file: path, "\(error)") }
    }
}
