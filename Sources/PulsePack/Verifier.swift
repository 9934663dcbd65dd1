import Foundation
import PulseAge
import PulseCore
import PulseCrypto
import PulseImage
import PulsePDF
import PulseStore

/// `pulse-pack verify`: checks every blob and every manifest reference, and with key tables decrypts
/// every slide in memory. It collects every problem instead of stopping at the first (like restic check).
public struct Verifier {
    public struct Report: Sendable {
        public var problems: [String] = []
        public var notes: [String] = []
        public var blobs = 0
        public var manifests = 0
        public var slidesDecrypted = 0
    }

    let package: PulsePackage
    /// A key table file or a folder of them (`keys/<session>/<deckVersion>.json`); default `<package>/keys`.
    let keys: URL?
    /// age identities to open sealed key tables (`<deckVersion>.json.age`) with.
    let identities: [AgeIdentity]

    public init(package: URL, keys: URL?, identities: [AgeIdentity] = []) {
        self.package = PulsePackage(root: package)
        self.keys = keys
        self.identities = identities
    }

    public func run() -> Report {
        var report = Report()
        let index: PackageIndex
        do {
            guard package.exists else {
                report.problems.append("\(package.root.path): not a pulse package (no index.json)")
                return report
            }
            index = try package.readIndex()
        } catch {
            report.problems.append("\(error)")
            return report
        }
        let blobs = checkBlobs(&report)
        let manifests = checkManifests(index: index, blobs: blobs, report: &report)
        checkSlides(index: index, manifests: manifests, report: &report)
        return report
    }

    /// Re-hashes every blob; returns the intact ones with their sizes.
    private func checkBlobs(_ report: inout Report) -> [String: Int] {
        let folder = package.assets.folder
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else {
            report.problems.append("\(folder.path): missing or unreadable assets folder")
            return [:]
        }
        var intact: [String: Int] = [:]
        for name in names.sorted() where !name.hasPrefix(".tmp-") {
            let path = folder.appendingPathComponent(name).path
            guard Hex.isDigestName(name) else {
                report.problems.append("\(path): stray file in assets (not a SHA-256 name)")
                continue
            }
            report.blobs += 1
            guard let data = FileManager.default.contents(atPath: path) else {
                report.problems.append("\(path): unreadable blob")
                continue
            }
            guard SHA256.hex(data) == name else {
                report.problems.append("\(path): blob bytes do not hash to its name (damaged)")
                continue
            }
            intact[name] = data.count
        }
        return intact
    }

    /// Checks every manifest file (all versions) and that the index's current ones exist.
    private func checkManifests(index: PackageIndex, blobs: [String: Int], report: inout Report) -> [String: JSONValue] {
        var current: [String: JSONValue] = [:]
        for file in package.currentManifests(index) where !FileManager.default.fileExists(atPath: file.url.path) {
            report.problems.append("\(file.url.path): current manifest named by index.json is missing")
        }
        for file in package.manifestFiles() {
            guard let manifest = checkManifest(file.url, blobs: blobs, report: &report) else { continue }
            if file.kind == .sessions, index.sessions[file.id]?.packageVersion == file.packageVersion { current[file.id] = manifest }
        }
        return current
    }

    private func checkManifest(_ url: URL, blobs: [String: Int], report: inout Report) -> JSONValue? {
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

    /// With key tables: decrypts each current slide and checks that it is one PDF page or a whole image.
    private func checkSlides(index: PackageIndex, manifests: [String: JSONValue], report: inout Report) {
        let location = keys ?? package.keysFolder
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: location.path, isDirectory: &isFolder) else {
            if keys != nil { report.problems.append("\(location.path): no such key table or folder") }
            report.notes.append("no key tables at \(location.path): slides were not decrypted")
            return
        }
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
                try checkTable(try readTable(found), entry: entry, manifest: manifest, url: found, report: &report)
            } catch {
                report.problems.append("\(found.path): \(error)")
            }
        }
    }

    /// A plaintext key table, or a sealed one opened with the identities.
    private func readTable(_ url: URL) throws -> KeyTable {
        guard url.pathExtension == SealedKeyTable.fileExtension else { return try package.readKeyTable(at: url) }
        return try SealedKeyTable.open(Array(try Data(contentsOf: url)), identities: identities, name: url.path)
    }

    private func checkTable(
        _ table: KeyTable, entry: PackageIndex.Session, manifest: JSONValue, url: URL, report: inout Report
    ) throws {
        if table.deckVersion != entry.deckVersion || table.packageVersion != entry.packageVersion {
            report.problems.append("\(url.path): key table is for deckVersion \(table.deckVersion) / packageVersion "
                + "\(Format.short(table.packageVersion)), the package has \(entry.deckVersion) / \(Format.short(entry.packageVersion))")
        }
        let slides = manifest["slides"]?.arrayValue ?? []
        let keyed = Dictionary(table.slides.map { ($0.n, $0) }, uniquingKeysWith: { first, _ in first })
        for slide in slides {
            guard let n = slide["n"]?.intValue, let hash = slide["assetHash"]?.stringValue, let bytes = slide["bytes"]?.intValue else {
                report.problems.append("\(url.path): a slide entry of session \(table.sessionId) is malformed")
                continue
            }
            guard let keys = keyed[n], keys.assetHash == hash else {
                report.problems.append("\(url.path): no key for slide \(n) (\(Format.short(hash)))")
                continue
            }
            guard let data = try? package.assets.read((hash, bytes)) else { continue }  // reported by checkBlobs
            guard let key = Data(base64Encoded: keys.keyB64), let nonce = Data(base64Encoded: keys.nonceB64),
                let plaintext = try? AES256GCM.open(data, key: Array(key), nonce: Array(nonce))
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
