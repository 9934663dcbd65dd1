import Foundation
import PulseAge
import PulseCore
import PulseCrypto
import PulseServerStorage

extension PackageReader {
    /// The key table of a session's current deck: `keys/<id>/<deckVersion>.json`, or the sealed
    /// `.json.age` opened with the identities. `*.pending-*` files are never read.
    func readKeyTable(id: String, deckVersion: Int, packageId: PackageID, slides: [ManifestSlide]) throws -> KeyTableRecord {
        let plain = file("keys/\(id)/\(deckVersion).json")
        let sealed = file("keys/\(id)/\(deckVersion).json.age")
        let name: String
        let content: [UInt8]
        if FileManager.default.fileExists(atPath: plain.path) {
            name = plain.path
            content = try bytes(plain)
        } else if FileManager.default.fileExists(atPath: sealed.path) {
            name = sealed.path
            guard !identities.isEmpty else {
                throw InputError(file: name, "sealed key table: pass --identity FILE (the key server's age identity)")
            }
            do { content = try Age.decrypt(try bytes(sealed), identities: identities) } catch let error as InputError {
                throw error
            } catch {
                throw InputError(file: name, "cannot open with the given identity: \(error)")
            }
        } else {
            throw InputError(file: plain.path, "missing: no key table (.json or .json.age) for deckVersion \(deckVersion)")
        }
        let warnings = Warnings()
        let table = try JSONReader(file: name, value: try parse(content, name: name), warnings: warnings)
        guard try table.string("sessionId") == id else { throw table.error("sessionId", "expected \"\(id)\"") }
        guard try table.int("deckVersion") == deckVersion else { throw table.error("deckVersion", "expected \(deckVersion)") }
        guard let tablePackage = try table.optionalString("packageId") else {
            throw table.error("packageId", "missing (key tables of pulse-package/2 name their package)")
        }
        guard PackageID(tablePackage) == packageId else { throw table.error("packageId", "expected \(packageId), the package's id") }
        _ = try table.string("packageVersion", matching: Self.digestFormat, what: "64 lowercase hex digits")
        let keys = try table.objects("slides") { slide in
            (n: try slide.int("n"), assetHash: try slide.string("assetHash"), key: try slide.string("keyB64"), nonce: try slide.string("nonceB64"))
        }
        guard keys.count == slides.count else {
            throw table.error("slides", "\(keys.count) keys for the manifest's \(slides.count) slides")
        }
        return KeyTableRecord(sessionId: id, deckVersion: deckVersion, packageId: packageId, slides: try zip(keys, slides).map { key, slide in
            let path = "slides[\(slide.n)]"
            guard key.n == slide.n else { throw InputError(file: name, path: "\(path).n", "expected \(slide.n)") }
            guard Digest(hex: key.assetHash) == slide.assetHash else {
                throw InputError(file: name, path: "\(path).assetHash", "does not match the manifest's slide \(slide.n)")
            }
            // Never quote a key or nonce in an error.
            guard Data(base64Encoded: key.key)?.count == 32 else { throw InputError(file: name, path: "\(path).keyB64", "not 32 bytes of base64") }
            guard Data(base64Encoded: key.nonce)?.count == 12 else { throw InputError(file: name, path: "\(path).nonceB64", "not 12 bytes of base64") }
            return SlideKey(n: slide.n, assetHash: slide.assetHash, keyB64: key.key, nonceB64: key.nonce)
        })
    }

    /// `gated/<id>/<name>.json`, named by the SHA-256 of its bytes (checked):
    /// `{ sessionId, packageVersion, resources: [{ id, releaseAfterSlide?, releaseAt?, entry }] }`.
    /// Every gated entry of the manifest must have exactly one resource here, with the same id, title
    /// and kind, a full entry (`gated: false`) and at least one rule.
    func readGated(id: String, name: String, packageVersion: String, slideCount: Int, metadata: [String: JSONValue]) throws -> [GatedResource] {
        let url = file("gated/\(id)/\(name).json")
        let content = try bytes(url)
        guard SHA256.hex(content) == name else {
            throw InputError(file: url.path, "content does not hash to its name: the file was changed or damaged")
        }
        let value = try parse(content, name: url.path)
        let warnings = Warnings()
        let reader = try JSONReader(file: url.path, value: value, warnings: warnings)
        guard try reader.string("sessionId") == id else { throw reader.error("sessionId", "expected \"\(id)\"") }
        guard try reader.string("packageVersion") == packageVersion else { throw reader.error("packageVersion", "expected \(packageVersion)") }
        guard case let .array(items)? = value["resources"] else { throw reader.error("resources", "missing (expected an array)") }
        var resources: [GatedResource] = []
        for (index, item) in items.enumerated() {
            let path = "resources[\(index)]"
            guard let resourceId = item["id"]?.stringValue else { throw InputError(file: url.path, path: "\(path).id", "missing") }
            guard let meta = metadata[resourceId] else {
                throw InputError(file: url.path, path: "\(path).id", "\"\(resourceId)\" is not a gated resource of the manifest")
            }
            guard !resources.contains(where: { $0.id == resourceId }) else {
                throw InputError(file: url.path, path: "\(path).id", "\"\(resourceId)\" appears twice")
            }
            guard let entry = item["entry"], case .object = entry else { throw InputError(file: url.path, path: "\(path).entry", "missing (expected an object)") }
            guard entry["gated"] == .bool(false) else { throw InputError(file: url.path, path: "\(path).entry.gated", "expected false") }
            for field in ["id", "title", "kind"] where entry[field] != meta[field] {
                throw InputError(file: url.path, path: "\(path).entry.\(field)", "differs from the manifest's gated entry")
            }
            var rule = GateRule()
            if let slide = item["releaseAfterSlide"] {
                guard let value = slide.intValue, (0..<slideCount).contains(value) else {
                    throw InputError(file: url.path, path: "\(path).releaseAfterSlide", "expected a slide number from 0 to \(slideCount - 1)")
                }
                rule.releaseAfterSlide = value
            }
            if let moment = item["releaseAt"] {
                guard let text = moment.stringValue, let seconds = Self.unixSeconds(text) else {
                    throw InputError(file: url.path, path: "\(path).releaseAt", "expected a time like 2026-12-03T10:15:00+01:00")
                }
                rule.releaseAt = seconds
            }
            guard rule.releaseAfterSlide != nil || rule.releaseAt != nil else {
                throw InputError(file: url.path, path: path, "has neither releaseAfterSlide nor releaseAt: it could never be released")
            }
            resources.append(GatedResource(id: resourceId, rule: rule, entry: entry))
        }
        if let missing = metadata.keys.sorted().first(where: { key in !resources.contains { $0.id == key } }) {
            throw InputError(file: url.path, path: "resources", "no entry for the manifest's gated resource \"\(missing)\"")
        }
        return resources
    }

    /// An RFC 3339 time (`Z` or an offset, optional fraction) as Unix seconds.
    static func unixSeconds(_ text: String) -> Int64? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        if let date = formatter.date(from: text) { return Int64(date.timeIntervalSince1970.rounded(.down)) }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text).map { Int64($0.timeIntervalSince1970.rounded(.down)) }
    }
}
