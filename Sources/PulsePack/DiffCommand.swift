import Foundation
import PulseCommandLine
import PulseCore
import PulseStore

/// `pulse-pack diff`.
enum DiffCommand {
    static func command(terminal: Terminal) -> Command {
        Command(
            name: "diff",
            abstract: "Show the delta-sync plan between two manifests: slides changed, hashes to fetch and drop, bytes to download.",
            discussion: """
                Give two manifests of one session (or series), or a package and a session id to compare that session's \
                previous version with its current one (from the package's server/ part, where manifests live). Slides are \
                numbered from 1 as the deck's pages are (the manifest's n is one less).
                """,
            examples: [
                "pulse-pack diff pkg keynote                     # the last change of session keynote",
                "pulse-pack diff pkg/server/sessions/keynote/<old>.json pkg/server/sessions/keynote/<new>.json",
                "pulse-pack diff pkg keynote --json",
            ],
            options: [
                .flag("json", help: "Print the plan as JSON on stdout (docs/json-output.md)."),
                .value("package", "<dir>", help: "A package folder: compare the two newest versions of --session (same as diff <dir> <id>)."),
                .value("session", "<id>", help: "The session to compare, with --package."),
            ],
            positionals: [
                Positional("old-manifest-or-package", help: "The manifest the phone holds, or a package folder.", optional: true),
                Positional("new-manifest-or-session", help: "The manifest it syncs to, or a session id of the package.", optional: true),
            ],
            run: { arguments in
                let (old, new) = try manifests(arguments)
                let plan = DeltaPlan(old: old.value, new: new.value)
                let slides = SlideChanges(old: old.value, new: new.value)
                if arguments.flag("json") {
                    guard case var .object(fields) = plan.json else { return ExitCode.failure }
                    fields["kind"] = .string(new.kind.rawValue)
                    fields["id"] = new.id.map(JSONValue.string) ?? .null
                    fields["slides"] = slides.json
                    fields["old"] = .string(old.name)
                    fields["new"] = .string(new.name)
                    terminal.print(String(decoding: JSONValue.object(fields).prettyBytes.dropLast(), as: UTF8.self))
                    return ExitCode.success
                }
                if plan.unchanged {
                    terminal.print("unchanged: same packageVersion (the app gets a 304 and fetches nothing)")
                    return ExitCode.success
                }
                let slideHashes = Set((new.value["slides"]?.arrayValue ?? []).compactMap { $0["assetHash"]?.stringValue })
                    .union((old.value["slides"]?.arrayValue ?? []).compactMap { $0["assetHash"]?.stringValue })
                for line in slides.lines { terminal.print(line) }
                for asset in plan.fetch where !slideHashes.contains(asset.assetHash) {
                    terminal.print("image added: \(asset.assetHash)  \(Format.bytes(asset.bytes))")
                }
                for asset in plan.drop where !slideHashes.contains(asset.assetHash) {
                    terminal.print("image dropped: \(asset.assetHash)  \(Format.bytes(asset.bytes))")
                }
                for asset in plan.fetch { terminal.print("+ \(asset.assetHash)  \(Format.bytes(asset.bytes))") }
                for asset in plan.drop { terminal.print("- \(asset.assetHash)  \(Format.bytes(asset.bytes))") }
                terminal.print("fetch \(plan.fetch.count), drop \(plan.drop.count), keep \(plan.kept); download \(Format.bytes(plan.bytes)) (\(plan.bytes) bytes)")
                return ExitCode.success
            })
    }

    /// A manifest read for diff: its file, its value and what it is a manifest of.
    struct Manifest {
        enum Kind: String { case session, series, appconfig }
        var name: String
        var value: JSONValue
        var kind: Kind
        var id: String?
    }

    /// The old and new manifest: two files, or a session's two newest versions in a package
    /// (`diff P S` or `diff --package P --session S`: one code path).
    static func manifests(_ arguments: Arguments) throws -> (Manifest, Manifest) {
        let first = arguments.positional("old-manifest-or-package"), second = arguments.positional("new-manifest-or-session")
        var folder = arguments.value("package"), session = arguments.value("session")
        if folder == nil, let first, isFolder(first) {
            guard session == nil else { throw UsageError("give the session once: diff <package> <session> or --package and --session") }
            folder = first
            session = second
        } else if folder != nil, first != nil {
            throw UsageError("give two manifest files, or a package and a session, not both")
        }
        guard let folder else {
            guard session == nil else { throw UsageError("--session goes with --package <dir>") }
            guard let first, let second else { throw UsageError("missing <new-manifest-or-session>: give two manifests, or a package and a session") }
            let old = try readManifest(first), new = try readManifest(second)
            try checkComparable(old, new)
            return (old, new)
        }
        guard let session else { throw UsageError("missing the session: diff \(folder) <session-id>") }
        return try packageVersions(folder: folder, session: session)
    }

    private static func isFolder(_ path: String) -> Bool {
        var folder: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &folder) && folder.boolValue
    }

    private static func packageVersions(folder: String, session: String) throws -> (Manifest, Manifest) {
        let package = PulsePackage(root: fileURL(folder))
        let index: PackageIndex
        do { index = try package.readIndex() } catch let error as StoreError { throw InputError(file: error.path, error.message) }
        let versions = index.versions(.sessions, session)
        guard versions.count >= 2 else {
            let known = index.sessions.keys.sorted()
            throw InputError(file: package.indexURL.path, path: "history.sessions/\(session)",
                             versions.isEmpty ? "no such session in the package" + Suggestion.didYouMean(session, among: known)
                                + (known.isEmpty ? "" : " (sessions: \(known.joined(separator: ", ")))")
                                : "one version only: nothing to compare")
        }
        let read = { (version: PackageIndex.Version) in
            try readManifest(package.manifestURL(.sessions, id: session, packageVersion: version.packageVersion).path)
        }
        return (try read(versions[1]), try read(versions[0]))
    }

    static func readManifest(_ path: String) throws -> Manifest {
        let data = try InputLoader.readFile(fileURL(path))
        let value = try JSONValue.parse(data, file: path)
        guard value[PackageVersion.field]?.stringValue != nil else {
            if value["startsAt"] != nil || value["deck"] != nil || value["sessions"]?.arrayValue?.first?.stringValue != nil {
                throw InputError(file: path, "is a description file (the build's input), not a manifest: manifests are in "
                    + "<package>/server/sessions/<id>/; or compare a session's last change with: pulse-pack diff <package> <session>")
            }
            throw InputError(file: path, "not a manifest (no packageVersion)")
        }
        if value["series"]?.objectValue != nil { return Manifest(name: path, value: value, kind: .series, id: value["series"]?["id"]?.stringValue) }
        if value["org"]?.stringValue != nil, value["slides"] == nil {
            return Manifest(name: path, value: value, kind: .appconfig, id: value["org"]?.stringValue)
        }
        return Manifest(name: path, value: value, kind: .session, id: value["session"]?["id"]?.stringValue)
    }

    /// Two versions of one document, or the comparison means nothing.
    private static func checkComparable(_ old: Manifest, _ new: Manifest) throws {
        guard old.kind == new.kind else {
            throw InputError(file: new.name, "is a \(new.kind.rawValue) manifest, \(old.name) a \(old.kind.rawValue) manifest: compare two versions of one \(old.kind.rawValue)")
        }
        if let a = old.id, let b = new.id, a != b {
            throw InputError(file: new.name, "is \(new.kind.rawValue) \"\(b)\", \(old.name) is \(old.kind.rawValue) \"\(a)\": compare two versions of one \(old.kind.rawValue)")
        }
    }
}
