import Foundation
import PulseCore
import PulseCrypto
import PulseStore

/// `pulse-pack build`: series/session files and decks → blobs, manifests, key tables, one index commit.
public struct Builder {
    public struct Options: Sendable {
        /// A series file (it lists `sessions`) or a single session file.
        public var input: URL
        /// Overrides a single session's `deck`.
        public var deck: URL?
        public var output: URL
        public var secretFile: URL?
        public var environment: [String: String]
        /// Threads per deck; nil picks by deck kind (`Deck.defaultWorkers`).
        public var workers: Int?
        /// age recipients (`age1…`): key tables are written sealed (`<deckVersion>.json.age`), never in plaintext.
        public var sealTo: [String] = []

        public init(
            input: URL, deck: URL? = nil, output: URL, secretFile: URL? = nil,
            environment: [String: String] = ProcessInfo.processInfo.environment,
            workers: Int? = nil
        ) {
            self.input = input
            self.deck = deck
            self.output = output
            self.secretFile = secretFile
            self.environment = environment
            self.workers = workers
        }
    }

    /// Progress events: a session's deck starts (`total` slides), then one call per finished slide.
    public typealias Progress = @Sendable (_ session: String, _ done: Int, _ total: Int) -> Void

    let options: Options

    public init(options: Options) {
        self.options = options
    }

    /// Runs the build. Input is read and checked in full before the package is touched; the package
    /// changes only by new blobs and new files until `index.json` is replaced as the last step.
    @discardableResult
    public func run(progress: Progress? = nil) throws -> BuildReport {
        let started = Date()
        let warnings = Warnings()
        let loader = InputLoader(warnings: warnings)
        let keyTables = try KeyTableWriter(sealTo: options.sealTo)
        let (series, sessions) = try readInput(loader)
        let decks = try sessions.map { session in
            guard let url = (series == nil ? options.deck : nil) ?? session.deck else {
                throw InputError(file: session.file.path, path: "deck", "missing: name the deck here or give --deck")
            }
            return try Deck.open(url)
        }

        let package = PulsePackage(root: options.output)
        try PackageFolder.prepare(package)
        let lock = try PackageLock(package)
        defer { withExtendedLifetime(lock) {} }
        try PackageFolder.removeUnfinishedWrites(package)
        var index = try package.readIndex()
        let cipher = SlideCipher(secret: try PackageSecret.load(
            file: options.secretFile, environment: options.environment, package: package))

        try KeyTableWriter.settlePending(in: package, index: index)

        var report = BuildReport(package: package.root.path)
        let journal = BuildJournal()
        let blobs = BlobBatch(store: package.assets)
        do {
            try AtomicFile.makeFolder(package.assets.folder)
            var decksDone: [[SlideOutcome]] = []
            for (session, deck) in zip(sessions, decks) {
                progress?(session.id, 0, deck.slideCount)
                let done = Counter()
                decksDone.append(try SlidePipeline.run(
                    deck: deck, cipher: cipher, blobs: blobs, workers: options.workers ?? deck.defaultWorkers,
                    progress: { progress?(session.id, done.increment(), deck.slideCount) }))
            }
            for image in loader.images.values.sorted(by: { $0.hash < $1.hash }) {
                if try blobs.put(image.bytes, hash: image.hash) { report.newImages += 1 } else { report.reusedImages += 1 }
            }
            // Blobs first: every manifest written below names only blobs already in place.
            journal.blobs = blobs.hashes
            try blobs.commit()
            for (session, (deck, outcomes)) in zip(sessions, zip(decks, decksDone)) {
                report.sessions.append(try publish(
                    session, deck: deck, outcomes: outcomes, package: package, index: &index, journal: journal, keyTables: keyTables))
            }
            if let series {
                report.documents += try publish(series, sessionIds: sessions.map(\.id), package: package, index: &index, journal: journal)
            }
            report.documents += try refreshLinkedSeries(package: package, index: &index, skipping: series?.id, journal: journal)
            try package.writeIndex(index)
        } catch {
            // Nothing new is referenced yet: take the new files away so the folder is as it was.
            blobs.discard(committed: journal.blobs)
            journal.rollBack()
            throw error
        }
        // Same deckVersion, new packageVersion: the pending table takes the table's place only now that
        // the index names the new version (a kill right here is finished by the next build).
        for pending in journal.pendingKeyTables { try KeyTableWriter.promote(pending) }

        report.seconds = Date().timeIntervalSince(started)
        report.warnings = warnings.messages
        return report
    }

    private func readInput(_ loader: InputLoader) throws -> (SeriesDescription?, [SessionDescription]) {
        let top = try loader.readJSON(options.input)
        guard top.has("sessions") else {
            return (nil, [try SessionDescription(file: options.input, loader: loader)])
        }
        if options.deck != nil {
            throw InputError(file: options.input.path, "is a series file: each session names its own deck, --deck is for one session")
        }
        let series = try SeriesDescription(file: options.input, loader: loader)
        let sessions = try series.sessionFiles.map { try SessionDescription(file: $0, loader: loader) }
        var ids = Set<String>()
        for session in sessions where !ids.insert(session.id).inserted {
            throw InputError(file: session.file.path, path: "id", "session \"\(session.id)\" appears twice in the series")
        }
        for link in series.linkedSessionIds where !ids.contains(link.id) {
            throw InputError(file: options.input.path, path: link.path, "names session \"\(link.id)\", which the series does not list")
        }
        return (series, sessions)
    }

    /// Writes one session's key table and manifest and records them in the (not yet committed) index.
    private func publish(
        _ session: SessionDescription, deck: Deck, outcomes: [SlideOutcome], package: PulsePackage, index: inout PackageIndex,
        journal: BuildJournal, keyTables: KeyTableWriter
    ) throws -> BuildReport.Session {
        let deckDigest = SHA256.hex(Array(outcomes.map { "\($0.n):\($0.assetHash)\n" }.joined().utf8))
        let previous = index.sessions[session.id]
        let deckVersion: Int
        if let previous, previous.deckDigest == deckDigest {
            deckVersion = previous.deckVersion
        } else {
            deckVersion = (previous?.highestDeckVersion ?? 0) + 1
        }
        var content = session.content
        content["slides"] = .array(outcomes.map { ["n": .int($0.n), "assetHash": .string($0.assetHash), "bytes": .int($0.bytes)] })
        content["deckVersion"] = .int(deckVersion)
        let (manifest, packageVersion) = PackageVersion.stamped(.object(content))

        let table = KeyTable(
            sessionId: session.id, deckVersion: deckVersion, packageVersion: packageVersion,
            slides: outcomes.map {
                KeyTable.Slide(
                    n: $0.n, assetHash: $0.assetHash,
                    keyB64: Data($0.key).base64EncodedString(), nonceB64: Data($0.nonce).base64EncodedString())
            })
        let tableURL = keyTables.url(for: table, in: package)
        if deckVersion == previous?.deckVersion {
            if previous?.packageVersion != packageVersion {
                let pending = try keyTables.writePending(table, in: package)
                journal.created(pending)
                journal.pendingKeyTables.append(pending)
            }
        } else {
            // A new deckVersion: a new file that nothing committed refers to yet.
            try keyTables.write(table, in: package)
            journal.created(tableURL)
        }
        if try package.writeManifest(.sessions, id: session.id, manifest: manifest, packageVersion: packageVersion) {
            journal.created(package.manifestURL(.sessions, id: session.id, packageVersion: packageVersion))
        }
        index.sessions[session.id] = PackageIndex.Session(
            packageVersion: packageVersion, deckVersion: deckVersion, deckDigest: deckDigest,
            highestDeckVersion: max(previous?.highestDeckVersion ?? 0, deckVersion))

        let newBlobs = outcomes.filter(\.isNew).count
        return BuildReport.Session(
            id: session.id, deck: deck.url.path, deckKind: deck.kind, slides: outcomes.count,
            bytes: outcomes.reduce(0) { $0 + $1.bytes }, newBlobs: newBlobs, reusedBlobs: outcomes.count - newBlobs,
            deckVersion: deckVersion, packageVersion: packageVersion, changed: previous?.packageVersion != packageVersion,
            manifestPath: package.manifestURL(.sessions, id: session.id, packageVersion: packageVersion).path,
            keyTablePath: tableURL.path)
    }

    /// Writes the series manifest (with a ref per linked session) and the org's app config.
    private func publish(
        _ series: SeriesDescription, sessionIds: [String], package: PulsePackage, index: inout PackageIndex, journal: BuildJournal
    ) throws -> [BuildReport.Document] {
        var content = series.content
        var documents: [BuildReport.Document] = []
        content["sessions"] = .array(try sessionRefs(ids: sessionIds, package: package, index: index))
        documents.append(
            try publishDocument(.series, id: series.id, content: content, package: package, index: &index.series, journal: journal))
        if let appConfig = series.appConfig, case let .object(body) = appConfig.body {
            documents.append(
                try publishDocument(.appconfig, id: appConfig.slug, content: body, package: package, index: &index.appconfig, journal: journal))
        }
        return documents
    }

    /// After a single-session build, series already in the package that link that session get its
    /// new packageVersion, so the series manifest never points at a stale session manifest.
    private func refreshLinkedSeries(
        package: PulsePackage, index: inout PackageIndex, skipping: String?, journal: BuildJournal
    ) throws -> [BuildReport.Document] {
        var documents: [BuildReport.Document] = []
        for (id, entry) in index.series.sorted(by: { $0.key < $1.key }) where id != skipping {
            let manifest = try package.readManifest(.series, id: id, packageVersion: entry.packageVersion)
            guard case var .object(content) = manifest, let refs = content["sessions"]?.arrayValue else { continue }
            let ids = refs.compactMap { $0["id"]?.stringValue }
            let updated = try sessionRefs(ids: ids, package: package, index: index)
            guard updated != refs else { continue }
            content["sessions"] = .array(updated)
            documents.append(try publishDocument(.series, id: id, content: content, package: package, index: &index.series, journal: journal))
        }
        return documents
    }

    private func sessionRefs(ids: [String], package: PulsePackage, index: PackageIndex) throws -> [JSONValue] {
        try ids.map { id in
            guard let entry = index.sessions[id] else { throw StoreError(path: package.indexURL.path, "session \(id) is not in the package") }
            let manifest = try package.readManifest(.sessions, id: id, packageVersion: entry.packageVersion)
            let title = manifest["session"]?["title"] ?? .string(id)
            return ["id": .string(id), "title": title, "packageVersion": .string(entry.packageVersion)]
        }
    }

    private func publishDocument(
        _ kind: PulsePackage.Kind, id: String, content: [String: JSONValue], package: PulsePackage,
        index: inout [String: PackageIndex.Document], journal: BuildJournal
    ) throws -> BuildReport.Document {
        let (manifest, packageVersion) = PackageVersion.stamped(.object(content))
        if try package.writeManifest(kind, id: id, manifest: manifest, packageVersion: packageVersion) {
            journal.created(package.manifestURL(kind, id: id, packageVersion: packageVersion))
        }
        let changed = index[id]?.packageVersion != packageVersion
        index[id] = PackageIndex.Document(packageVersion: packageVersion)
        return BuildReport.Document(kind: kind.rawValue, id: id, packageVersion: packageVersion, changed: changed)
    }
}

/// The files a build created before its commit (removed again if it fails), and the pending key tables
/// to promote after it.
final class BuildJournal: @unchecked Sendable {
    private let lock = NSLock()
    private var files: [URL] = []
    /// Blobs this build added (committed with the batch, so not yet named by any manifest).
    var blobs: [String] = []
    /// Key tables written beside their table, to take its place after the commit.
    var pendingKeyTables: [URL] = []

    func created(_ url: URL) { lock.withLock { files.append(url) } }

    func rollBack() {
        lock.withLock {
            for url in files { unlink(url.path) }
            files = []
        }
    }
}

/// A thread-safe counter for progress.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func increment() -> Int { lock.withLock { value += 1; return value } }
}
