import Foundation
import PulseAge
import PulseCore
import PulseCrypto
import PulseImage
import PulsePDF
import PulseStore
import PulseSystem

/// `pulse-pack verify`: checks both parts of a package. Public: every blob re-hashed, every blob list
/// against its name and against the manifests, nothing device-scoped in `public/`. Server: every
/// manifest against its packageVersion and its blobs, gated resources, and with key tables every slide
/// decrypted in memory. And the secret is not in the package folder. It collects every problem instead
/// of stopping at the first (like restic check).
public struct Verifier {
    public struct Report: Sendable {
        public var problems: [String] = []
        public var notes: [String] = []
        public var blobs = 0
        public var manifests = 0
        public var slidesDecrypted = 0
        /// False when the folder is no package of the current layout at all (nothing else was checked).
        public var isPackage = true
    }

    /// Progress of the long steps: `(step, done, total)` per blob re-hashed and per slide decrypted.
    public typealias Progress = (_ step: String, _ done: Int, _ total: Int) -> Void
    /// Called as blobs are re-hashed and slides decrypted (a progress bar on a terminal).
    public var progress: Progress?

    let package: PulsePackage
    /// A key table file or a folder of them (`<session>/<deckVersion>.json`); default `<package>/server/keys`.
    let keys: URL?
    /// age identities to open sealed key tables (`<deckVersion>.json.age`) with.
    let identities: [AgeIdentity]
    /// Where the default secret home is looked for (`XDG_CONFIG_HOME`, `HOME`).
    let environment: [String: String]

    public init(package: URL, keys: URL?, identities: [AgeIdentity] = [],
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.package = PulsePackage(root: package)
        self.keys = keys
        self.identities = identities
        self.environment = environment
    }

    public func run() -> Report {
        var report = Report()
        let index: PackageIndex
        do {
            switch try package.layout() {
            case .legacy:
                report.problems.append("\(package.root.path): \(package.legacyMessage)")
                report.isPackage = false
                return report
            case .current where package.exists:
                index = try package.readIndex()
            default:
                report.problems.append("\(package.root.path): not a pulse package (no server/index.json)")
                report.isPackage = false
                return report
            }
        } catch {
            report.problems.append("\(error)")
            report.isPackage = false
            return report
        }
        let blobs = checkBlobs(&report)
        checkPublicFiles(&report)
        checkPublicIndex(index: index, blobs: blobs, report: &report)
        let manifests = checkManifests(index: index, blobs: blobs, report: &report)
        checkHistory(index: index, report: &report)
        checkGated(index: index, manifests: manifests, report: &report)
        checkSlides(index: index, manifests: manifests, report: &report)
        checkSecret(index: index, report: &report)
        return report
    }

    /// Re-hashes every blob; returns the intact ones with their sizes.
    private func checkBlobs(_ report: inout Report) -> [Digest: Int] {
        let folder = package.assets.folder
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else {
            report.problems.append("\(folder.path): missing or unreadable assets folder")
            return [:]
        }
        var intact: [Digest: Int] = [:]
        let total = names.count
        for (done, name) in names.sorted().enumerated() where !name.hasPrefix(".tmp-") {
            progress?("  re-hashing blobs", done + 1, total)
            let path = folder.appendingPathComponent(name).path
            guard let digest = Digest(hex: name) else {
                report.problems.append("\(path): stray file in assets (not a SHA-256 name)")
                continue
            }
            report.blobs += 1
            guard let data = FileManager.default.contents(atPath: path) else {
                report.problems.append("\(path): unreadable blob")
                continue
            }
            guard Digest(of: data) == digest else {
                report.problems.append("\(path): blob bytes do not hash to its name (damaged)")
                continue
            }
            intact[digest] = data.count
        }
        return intact
    }

    /// `public/` holds only index.json, blobs, blob lists and app configs: never a manifest, key table,
    /// gated resource or secret.
    private func checkPublicFiles(_ report: inout Report) {
        let root = package.publicRoot
        guard let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]) else { return }
        for case let url as URL in enumerator {
            let path = String(url.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1))
            let parts = path.split(separator: "/").map(String.init)
            // Files only: a stray folder is reported through the files in it (an empty one holds nothing).
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true else { continue }
            if parts.last?.hasPrefix(".tmp-") == true { continue }
            let allowed = parts == ["index.json"]
                || parts.count == 2 && parts[0] == "assets"
                || parts.count == 2 && parts[0] == "refs" && parts[1].hasSuffix(".json") && Digest(hex: parts[1].dropLast(5)) != nil
                || parts.count == 3 && parts[0] == "appconfig" && parts[2].hasSuffix(".json") && Digest(hex: parts[2].dropLast(5)) != nil
            if !allowed { report.problems.append("\(url.path): does not belong in public/ (only blobs, blob lists, app configs and index.json do)") }
        }
    }

    /// Everything the public index names exists and is intact.
    private func checkPublicIndex(index: PackageIndex, blobs: [Digest: Int], report: inout Report) {
        let publicPart = package.publicPart
        let published: PublicIndex
        do { published = try publicPart.readIndex() } catch {
            report.problems.append("\(error)")
            return
        }
        if published.packageId != index.packageId {
            report.problems.append("\(publicPart.indexURL.path): names package \(published.packageId), server/index.json \(index.packageId)")
        }
        var checked = Set<String>()
        for (key, versions) in published.history.sorted(by: { $0.key < $1.key }) {
            for version in versions {
                for file in version.files ?? [] where !FileManager.default.fileExists(atPath: publicPart.root.appendingPathComponent(file).path) {
                    report.problems.append("\(publicPart.root.appendingPathComponent(file).path): missing (public/index.json names it for \(key))")
                }
                guard checked.insert(version.refs).inserted else { continue }
                let list: BlobList
                do { list = try publicPart.readBlobList(version.refs) } catch {
                    report.problems.append("\(error)")
                    continue
                }
                for entry in list.entries where blobs[entry.assetHash] != entry.bytes {
                    report.problems.append("\(publicPart.refsURL(version.refs).path): names blob \(entry.assetHash) (\(entry.bytes) bytes), "
                        + "which is missing or damaged")
                }
            }
        }
    }

    /// Checks every manifest file (all versions) and that the index's current ones exist; returns the
    /// current session manifests.
    private func checkManifests(index: PackageIndex, blobs: [Digest: Int], report: inout Report) -> [String: JSONValue] {
        var current: [String: JSONValue] = [:]
        for file in package.currentManifests(index) where !FileManager.default.fileExists(atPath: file.url.path) {
            report.problems.append("\(file.url.path): current manifest named by server/index.json is missing")
        }
        for file in package.manifestFiles() {
            guard let manifest = checkManifest(file.url, blobs: blobs, report: &report) else { continue }
            if file.kind == .sessions, index.sessions[file.id]?.packageVersion == file.packageVersion { current[file.id] = manifest }
        }
        return current
    }

    private func checkManifest(_ url: URL, blobs: [Digest: Int], report: inout Report) -> JSONValue? {
        report.manifests += 1
        guard let data = FileManager.default.contents(atPath: url.path), let manifest = try? JSONValue.parse(data) else {
            report.problems.append("\(url.path): unreadable manifest (not JSON)")
            return nil
        }
        let named = url.deletingPathExtension().lastPathComponent
        let stated = manifest[PackageVersion.field]?.stringValue
        if stated != named || PackageVersion.of(manifest) != named {
            report.problems.append("\(url.path): packageVersion does not match the content (edited after build?)")
        }
        for hash in manifest.malformedAssetHashes {
            report.problems.append("\(url.path): assetHash \(String(reflecting: hash)) is not a blob name (64 lowercase hex digits)")
        }
        for reference in manifest.assetReferences {
            switch blobs[reference.assetHash] {
            case nil:
                report.problems.append("\(url.path): refers to blob \(reference.assetHash), which is missing or damaged")
            case let size? where size != reference.bytes:
                report.problems.append("\(url.path): blob \(reference.assetHash) is \(size) bytes, the manifest says \(reference.bytes)")
            default:
                break
            }
        }
        return manifest
    }

    /// Every version in the history has its manifest, and the blob list it names is the one its manifest gives.
    private func checkHistory(index: PackageIndex, report: inout Report) {
        for kind in DocumentKind.allCases {
            let ids = Set(index.history.keys.filter { $0.hasPrefix(kind.rawValue + "/") }.map { String($0.dropFirst(kind.rawValue.count + 1)) })
            for id in ids.sorted() {
                let versions = index.versions(kind, id)
                let current = kind == .sessions ? index.sessions[id]?.packageVersion
                    : kind == .series ? index.series[id]?.packageVersion : index.appconfig[id]?.packageVersion
                if versions.first?.packageVersion != current {
                    report.problems.append("\(package.indexURL.path): history of \(kind.rawValue)/\(id) does not start with the current version")
                }
                for version in versions {
                    if Timestamp.date(version.publishedAt) == nil {
                        report.problems.append("\(package.indexURL.path): \(kind.rawValue)/\(id): publishedAt \"\(version.publishedAt)\" is not a UTC time")
                    }
                    guard let manifest = try? package.readManifest(kind, id: id, packageVersion: version.packageVersion) else {
                        report.problems.append("\(package.manifestURL(kind, id: id, packageVersion: version.packageVersion).path): "
                            + "missing (server/index.json lists it in the history)")
                        continue
                    }
                    let expected = BlobList(manifest: manifest).name
                    if version.refs != expected {
                        report.problems.append("\(package.indexURL.path): \(kind.rawValue)/\(id) version \(Format.short(version: version.packageVersion)) "
                            + "names blob list \(Format.short(version: version.refs)), its manifest gives \(Format.short(version: expected))")
                    } else if !FileManager.default.fileExists(atPath: package.refsURL(expected).path) {
                        report.problems.append("\(package.refsURL(expected).path): missing (the blob list of \(kind.rawValue)/\(id))")
                    }
                }
            }
        }
    }

    /// Each session's gated resources: intact, for its manifest, and every gated entry has its content.
    private func checkGated(index: PackageIndex, manifests: [String: JSONValue], report: inout Report) {
        for (id, session) in index.sessions.sorted(by: { $0.key < $1.key }) {
            let gatedIds = Set((manifests[id]?["resources"]?.arrayValue ?? []).filter { $0["gated"] == true }.compactMap { $0["id"]?.stringValue })
            guard let name = session.gated else {
                if !gatedIds.isEmpty, manifests[id] != nil {
                    report.problems.append("\(package.indexURL.path): session \(id) has gated resources but no gated file")
                }
                continue
            }
            let url = package.gatedURL(sessionId: id, name: name)
            guard let data = FileManager.default.contents(atPath: url.path) else {
                report.problems.append("\(url.path): missing (server/index.json names it for session \(id))")
                continue
            }
            guard SHA256.hex(data) == name, let json = try? JSONValue.parse(data) else {
                report.problems.append("\(url.path): bytes do not hash to its name (damaged or edited)")
                continue
            }
            if json["sessionId"]?.stringValue != id || json["packageVersion"]?.stringValue != session.packageVersion {
                report.problems.append("\(url.path): is not for session \(id) at packageVersion \(Format.short(version: session.packageVersion))")
            }
            let held = Set((json["resources"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue })
            if held != gatedIds {
                report.problems.append("\(url.path): holds resources \(held.sorted()), the manifest gates \(gatedIds.sorted())")
            }
        }
    }

    /// With key tables: decrypts each current slide and checks that it is one PDF page or a whole image.
    private func checkSlides(index: PackageIndex, manifests: [String: JSONValue], report: inout Report) {
        let location = keys ?? package.keysFolder
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: location.path, isDirectory: &isFolder) else {
            if keys != nil { report.problems.append("\(location.path): no such key table or folder") }
            report.notes.append("no key tables at \(location.path): slides were not decrypted")
            return
        }
        if keys == nil { checkPrivate(location, &report) }
        for (id, entry) in index.sessions.sorted(by: { $0.key < $1.key }) {
            guard let manifest = manifests[id] else { continue }
            let url = isFolder.boolValue
                ? location.appendingPathComponent(id).appendingPathComponent("\(entry.deckVersion).json") : location
            if !isFolder.boolValue, (try? readTable(url))?.sessionId != id { continue }
            let sealed = url.appendingPathExtension(SealedKeyTable.fileExtension)
            let found = FileManager.default.fileExists(atPath: url.path) ? url
                : FileManager.default.fileExists(atPath: sealed.path) ? sealed : nil
            guard let found else {
                report.problems.append("\(url.path): key table for session \(id) deckVersion \(entry.deckVersion) is missing")
                continue
            }
            if found == sealed && identities.isEmpty {
                report.notes.append("\(sealed.path) is sealed: give --identity to decrypt the slides of session \(id)")
                continue
            }
            do {
                try checkTable(try readTable(found), index: index, entry: entry, manifest: manifest, url: found, report: &report)
            } catch {
                report.problems.append("\(found.path): \(error)")
            }
        }
    }

    /// Key folders must not be open to group or others.
    private func checkPrivate(_ keysFolder: URL, _ report: inout Report) {
        let sessions = (try? FileManager.default.contentsOfDirectory(atPath: keysFolder.path)) ?? []
        for folder in [package.serverRoot, keysFolder] + sessions.map({ keysFolder.appendingPathComponent($0) }) {
            guard let info = try? FileInfo.of(folder.path), info.isFolder, info.permissions & 0o077 != 0 else { continue }
            report.problems.append("\(folder.path): open to others (mode \(String(info.permissions & 0o777, radix: 8))); "
                + "chmod 700 it (the next build does)")
        }
    }

    /// A plaintext key table, or a sealed one opened with the identities.
    private func readTable(_ url: URL) throws -> KeyTable {
        guard url.pathExtension == SealedKeyTable.fileExtension else { return try package.readKeyTable(at: url) }
        return try SealedKeyTable.open(Array(try Data(contentsOf: url)), identities: identities, name: url.path)
    }

    private func checkTable(
        _ table: KeyTable, index: PackageIndex, entry: PackageIndex.Session, manifest: JSONValue, url: URL, report: inout Report
    ) throws {
        if table.deckVersion != entry.deckVersion || table.packageVersion != entry.packageVersion {
            report.problems.append("\(url.path): key table is for deckVersion \(table.deckVersion) / packageVersion "
                + "\(Format.short(version: table.packageVersion)), the package has \(entry.deckVersion) / \(Format.short(version: entry.packageVersion))")
        }
        if let id = table.packageId, id != index.packageId {
            report.problems.append("\(url.path): key table is for package \(id), this is package \(index.packageId)")
        }
        let slides = manifest["slides"]?.arrayValue ?? []
        let keyed = Dictionary(table.slides.map { ($0.n, $0) }, uniquingKeysWith: { first, _ in first })
        for (done, slide) in slides.enumerated() {
            progress?("  decrypting \(table.sessionId)", done + 1, slides.count)
            guard let n = slide["n"]?.intValue, let hash = slide["assetHash"]?.digestValue, let bytes = slide["bytes"]?.intValue else {
                report.problems.append("\(url.path): a slide entry of session \(table.sessionId) is malformed")
                continue
            }
            guard let keys = keyed[n], keys.assetHash == hash else {
                report.problems.append("\(url.path): no key for slide \(n) (\(Format.short(hash)))")
                continue
            }
            guard let data = try? package.assets.read((hash, bytes)) else { continue }  // reported by checkBlobs
            guard let key = Data(base64Encoded: keys.keyB64), let nonce = Data(base64Encoded: keys.nonceB64),
                let plaintext = try? AES256GCM.open(data, key: SecretBytes(key), nonce: SecretBytes(nonce))
            else {
                report.problems.append("session \(table.sessionId) slide \(n): does not decrypt with its key (blob \(Format.short(hash)))")
                continue
            }
            if let problem = Self.checkPlaintext(plaintext) {
                report.problems.append("session \(table.sessionId) slide \(n): \(problem)")
            }
            report.slidesDecrypted += 1
        }
    }

    /// The secret must not be in the package folder: not the old `secret` file, not the default home.
    private func checkSecret(index: PackageIndex, report: inout Report) {
        if FileManager.default.fileExists(atPath: package.legacySecretURL.path) {
            report.problems.append("\(package.legacySecretURL.path): a package secret inside the package folder, where a copy or sync "
                + "of the folder ships it; move it to \(PackageSecret.defaultURL(packageId: index.packageId, environment: environment)?.path ?? "its home")")
        }
        if let home = PackageSecret.defaultURL(packageId: index.packageId, environment: environment),
           PackageSecret.isInside(home, package.root), FileManager.default.fileExists(atPath: home.path) {
            report.problems.append("\(home.path): the package secret is inside the package folder (XDG_CONFIG_HOME or HOME points into it)")
        }
    }

    /// Nil if `plaintext` is a one-page PDF or a complete image; otherwise what is wrong.
    static func checkPlaintext(_ plaintext: [UInt8]) -> String? {
        if plaintext.starts(with: Array("%PDF-".utf8)) {
            do {
                let pages = try PDFDocument(bytes: plaintext, name: "slide").pageCount
                return pages == 1 ? nil : "decrypted PDF has \(pages) pages, expected 1"
            } catch {
                return "decrypted PDF does not parse: \(error)"
            }
        }
        do { _ = try ImageFormat.validate(plaintext) } catch { return "decrypted slide is neither a PDF page nor an image: \(error)" }
        return nil
    }
}
