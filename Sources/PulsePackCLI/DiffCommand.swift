import Foundation
import PulseCommandLine
import PulseCore
import PulsePack
import PulseStore

/// `pulse-pack diff`.
enum DiffCommand {
    static let json = Option.flag("json", help: "Print the plan as JSON on stdout (docs/json-output.md).")
    static let package = Option.value(
        "package", "<dir>", help: "A package folder: compare the two newest versions of --session (same as diff <dir> <id>).")
    static let session = Option.value("session", "<id>", help: "The session to compare, with --package.")
    static let old = Positional.optional("old-manifest-or-package", help: "The manifest the phone holds, or a package folder.")
    static let new = Positional.optional("new-manifest-or-session", help: "The manifest it syncs to, or a session id of the package.")

    static func command(console: Console) -> Command {
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
            options: [json, package, session],
            positionals: [old, new],
            validate: { arguments in _ = try comparison(arguments) },
            run: { arguments in
                let (old, new) = try manifests(try comparison(arguments))
                let plan = DeltaPlan(old: old.value, new: new.value)
                let slides = SlideChanges(old: old.value, new: new.value)
                if arguments[Self.json] {
                    guard case var .object(fields) = plan.json else { return ExitCode.failure }
                    fields["kind"] = .string(new.kind.rawValue)
                    fields["id"] = new.id.map(JSONValue.string) ?? .null
                    fields["slides"] = slides.json
                    fields["old"] = .string(old.name)
                    fields["new"] = .string(new.name)
                    console.out(json: .object(fields))
                    return ExitCode.success
                }
                if plan.unchanged {
                    console.out("unchanged: same packageVersion (the app gets a 304 and fetches nothing)")
                    return ExitCode.success
                }
                let slideHashes = Set((new.value["slides"]?.arrayValue ?? []).compactMap { $0["assetHash"]?.digestValue })
                    .union((old.value["slides"]?.arrayValue ?? []).compactMap { $0["assetHash"]?.digestValue })
                for line in slides.lines { console.out(line) }
                for asset in plan.fetch where !slideHashes.contains(asset.assetHash) {
                    console.out("image added: \(asset.assetHash)  \(Format.bytes(asset.bytes))")
                }
                for asset in plan.drop where !slideHashes.contains(asset.assetHash) {
                    console.out("image dropped: \(asset.assetHash)  \(Format.bytes(asset.bytes))")
                }
                for asset in plan.fetch { console.out("+ \(asset.assetHash)  \(Format.bytes(asset.bytes))") }
                for asset in plan.drop { console.out("- \(asset.assetHash)  \(Format.bytes(asset.bytes))") }
                console.out("fetch \(plan.fetch.count), drop \(plan.drop.count), keep \(plan.kept); download \(Format.bytes(plan.bytes)) (\(plan.bytes) bytes)")
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

    /// What to compare: two manifest files, or a session's two newest versions in a package.
    enum Comparison {
        case files(old: String, new: String)
        case package(folder: String, session: String)
    }

    /// The comparison the arguments ask for (`diff A B`, `diff P S` or `diff --package P --session S`: one
    /// code path); a usage error for any other combination.
    static func comparison(_ arguments: Arguments) throws -> Comparison {
        let first = arguments[Self.old], second = arguments[Self.new]
        var folder = arguments[Self.package], session = arguments[Self.session]
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
            return .files(old: first, new: second)
        }
        guard let session else { throw UsageError("missing the session: diff \(folder) <session-id>") }
        return .package(folder: folder, session: session)
    }

    /// The old and new manifest of a comparison.
    static func manifests(_ comparison: Comparison) throws -> (Manifest, Manifest) {
        switch comparison {
        case let .files(first, second):
            let old = try readManifest(first), new = try readManifest(second)
            try checkComparable(old, new)
            return (old, new)
        case let .package(folder, session):
            return try packageVersions(folder: folder, session: session)
        }
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
