import Foundation
import PulseCore
import PulseCrypto
import PulseStore

/// Writes one build's documents into the package before its commit: each session's manifest, blob list,
/// gated resources and key table, the series manifest and app config, and records them in the (not yet
/// committed) index. Every file it creates is new or identical to one already there, and is journaled.
struct Publisher {
    let package: PulsePackage
    let journal: BuildJournal
    /// This build's publish time, for versions it publishes.
    let publishedAt: String

    /// Writes one session's key table, manifest, blob list and gated resources.
    func publish(
        _ session: SessionDescription, deck: Deck, outcomes: [SlideOutcome], index: inout PackageIndex, keyTables: KeyTableWriter
    ) throws -> BuildReport.Session {
        let deckDigest = SHA256.hex(Array(outcomes.map { "\($0.n):\($0.assetHash.hex)\n" }.joined().utf8))
        let previous = index.sessions[session.id]
        let deckVersion: Int
        if let previous, previous.deckDigest == deckDigest {
            deckVersion = previous.deckVersion
        } else {
            deckVersion = (previous?.highestDeckVersion ?? 0) + 1
        }
        var content = session.content
        content["slides"] = .array(outcomes.map { ["n": .int($0.n), "assetHash": JSONValue($0.assetHash), "bytes": .int($0.bytes)] })
        content["deckVersion"] = .int(deckVersion)
        let (manifest, packageVersion) = PackageVersion.stamped(.object(content))

        let table = KeyTable(
            packageId: index.packageId, sessionId: session.id, deckVersion: deckVersion, packageVersion: packageVersion,
            slides: outcomes.map {
                KeyTable.Slide(n: $0.n, assetHash: $0.assetHash, keyB64: $0.key.base64EncodedString(), nonceB64: $0.nonce.base64EncodedString())
            })
        let tableURL = keyTables.url(for: table, in: package)
        if deckVersion == previous?.deckVersion {
            if previous?.packageVersion != packageVersion || !keyTables.hasTable(table, in: package) {
                let pending = try keyTables.writePending(table, in: package)
                journal.created(pending)
                journal.pendingKeyTables.append(pending)
            }
        } else {
            // A new deckVersion: a new file that nothing committed refers to yet.
            try keyTables.write(table, in: package)
            journal.created(tableURL)
        }
        try writeManifest(.sessions, id: session.id, manifest: manifest, packageVersion: packageVersion)
        let refs = try writeBlobList(manifest)
        var gatedName: String?
        if !session.gated.isEmpty {
            let gated = GatedResources(sessionId: session.id, packageVersion: packageVersion, resources: session.gated.map(\.resource))
            if try package.writeGated(gated) { journal.created(package.gatedURL(sessionId: session.id, name: gated.name)) }
            gatedName = gated.name
        }
        index.sessions[session.id] = PackageIndex.Session(
            packageVersion: packageVersion, deckVersion: deckVersion, deckDigest: deckDigest,
            highestDeckVersion: max(previous?.highestDeckVersion ?? 0, deckVersion), gated: gatedName)
        index.publish(.sessions, session.id, .init(packageVersion: packageVersion, refs: refs, publishedAt: publishedAt, gated: gatedName))

        let newBlobs = outcomes.filter(\.isNew).count
        return BuildReport.Session(
            id: session.id, deck: deck.url.path, deckKind: deck.kind, slides: outcomes.count,
            bytes: outcomes.reduce(0) { $0 + $1.bytes }, newBlobs: newBlobs, reusedBlobs: outcomes.count - newBlobs,
            deckVersion: deckVersion, packageVersion: packageVersion, changed: previous?.packageVersion != packageVersion,
            manifestPath: package.manifestURL(.sessions, id: session.id, packageVersion: packageVersion).path,
            keyTablePath: tableURL.path, slideFiles: deck.slideFileNames, ignoredFiles: deck.ignored)
    }

    /// Writes the series manifest (with a ref per linked session) and the org's app config.
    func publish(_ series: SeriesDescription, sessionIds: [String], index: inout PackageIndex) throws -> [BuildReport.Document] {
        var content = series.content
        var documents: [BuildReport.Document] = []
        content["sessions"] = .array(try sessionRefs(ids: sessionIds, index: index))
        documents.append(try publishDocument(.series, id: series.id, content: content, index: &index))
        if let appConfig = series.appConfig, case let .object(body) = appConfig.body {
            documents.append(try publishDocument(.appconfig, id: appConfig.slug, content: body, index: &index))
        }
        return documents
    }

    /// After a single-session build, series already in the package that link that session get its
    /// new packageVersion, so the series manifest never points at a stale session manifest.
    func refreshLinkedSeries(index: inout PackageIndex, skipping: String?) throws -> [BuildReport.Document] {
        var documents: [BuildReport.Document] = []
        for (id, entry) in index.series.sorted(by: { $0.key < $1.key }) where id != skipping {
            let manifest = try package.readManifest(.series, id: id, packageVersion: entry.packageVersion)
            guard case var .object(content) = manifest, let refs = content["sessions"]?.arrayValue else { continue }
            let ids = refs.compactMap { $0["id"]?.stringValue }
            let updated = try sessionRefs(ids: ids, index: index)
            guard updated != refs else { continue }
            content["sessions"] = .array(updated)
            content[PackageVersion.field] = nil
            documents.append(try publishDocument(.series, id: id, content: content, index: &index))
        }
        return documents
    }

    private func sessionRefs(ids: [String], index: PackageIndex) throws -> [JSONValue] {
        try ids.map { id in
            guard let entry = index.sessions[id] else { throw StoreError(path: package.indexURL.path, "session \(id) is not in the package") }
            let manifest = try package.readManifest(.sessions, id: id, packageVersion: entry.packageVersion)
            let title = manifest["session"]?["title"] ?? .string(id)
            return ["id": .string(id), "title": title, "packageVersion": .string(entry.packageVersion)]
        }
    }

    private func publishDocument(
        _ kind: DocumentKind, id: String, content: [String: JSONValue], index: inout PackageIndex
    ) throws -> BuildReport.Document {
        let (manifest, packageVersion) = PackageVersion.stamped(.object(content))
        try writeManifest(kind, id: id, manifest: manifest, packageVersion: packageVersion)
        let refs = try writeBlobList(manifest)
        let current = kind == .series ? index.series[id] : index.appconfig[id]
        let changed = current?.packageVersion != packageVersion
        if kind == .series { index.series[id] = .init(packageVersion: packageVersion) } else { index.appconfig[id] = .init(packageVersion: packageVersion) }
        index.publish(kind, id, .init(packageVersion: packageVersion, refs: refs, publishedAt: publishedAt))
        return BuildReport.Document(kind: kind, id: id, packageVersion: packageVersion, changed: changed)
    }

    private func writeManifest(_ kind: DocumentKind, id: String, manifest: JSONValue, packageVersion: String) throws {
        if try package.writeManifest(kind, id: id, manifest: manifest, packageVersion: packageVersion) {
            journal.created(package.manifestURL(kind, id: id, packageVersion: packageVersion))
        }
    }

    /// Writes the blob list of a manifest (`public/refs/<name>.json`); returns its name.
    private func writeBlobList(_ manifest: JSONValue) throws -> String {
        let list = BlobList(manifest: manifest)
        if try package.writeBlobList(list) { journal.created(package.refsURL(list.name)) }
        return list.name
    }
}
