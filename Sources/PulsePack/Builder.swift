import Foundation
import Synchronization
import PulseCore
import PulseCrypto
import PulseImage
import PulseStore
import PulseSystem

/// `pulse-pack build`: series/session files and decks → blobs, manifests, gated resources, key tables,
/// one index commit (docs/package-format.md).
public struct Builder {
    public struct Options: Sendable {
        /// A series file (it lists `sessions`) or a single session file.
        public var input: URL
        /// Overrides a single session's `deck`.
        public var deck: URL?
        public var output: URL
        public var secretFile: URL?
        /// The id of a new package (random when nil); an existing package must already have it.
        public var packageId: PackageID?
        /// `PULSE_PACKAGE_SECRET`, `SOURCE_DATE_EPOCH`, `XDG_CONFIG_HOME` and `HOME` are read from here.
        public var environment: [String: String]
        /// Threads per deck; nil picks by deck kind (`Deck.defaultWorkers`).
        public var workers: Int?
        /// age recipients (`age1…`): key tables are written sealed (`<deckVersion>.json.age`), never in plaintext.
        public var sealTo: [String] = []
        /// `--lenient`: unknown fields in input files are warnings, not errors.
        public var lenient = false
        /// `--max-image-size`: public images above this many bytes are warned about.
        public var warnImageBytes = ImageLimits.defaultWarnBytes

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
    /// changes only by new blobs and new files until the indexes are replaced as the last step.
    @discardableResult
    public func run(progress: Progress? = nil) throws -> BuildReport {
        let started = Date()
        let warnings = Warnings(lenient: options.lenient)
        let loader = InputLoader(warnings: warnings, warnImageBytes: options.warnImageBytes)
        let keyTables = try KeyTableWriter(sealTo: options.sealTo)
        let publishedAt = Timestamp.string(try publishTime())
        let requestedID = options.packageId
        let (series, sessions) = try readInput(loader)
        let decks = try sessions.map { session in
            guard let url = (series == nil ? options.deck : nil) ?? session.deck else {
                throw InputError(file: session.file.path, path: "deck", "missing: name the deck here or give --deck")
            }
            return try Deck.open(url)
        }
        for (session, deck) in zip(sessions, decks) { try Self.checkGated(session, deck: deck) }

        let package = PulsePackage(root: options.output)
        try PackageFolder.prepare(package)
        let lock = try PackageLock(package)
        defer { withExtendedLifetime(lock) {} }
        var report = BuildReport(package: package.root.path)
        if try PackageMigration.isNeeded(package) {
            report.migrated = try PackageMigration(package: package, packageId: requestedID, environment: options.environment).run()
        }
        try PackageFolder.removeUnfinishedWrites(package)
        var index = try package.readIndexIfPresent() ?? PackageIndex(packageId: try newPackageId(package, requested: requestedID))
        if let id = requestedID, id != index.packageId {
            throw InputError(file: package.root.path, "is package \(index.packageId), not --package-id \(id)")
        }
        let secret = try PackageSecret.load(
            file: options.secretFile, environment: options.environment, packageId: index.packageId, package: package)
        report.secret = secret.source
        report.secretCreated = secret.created
        if secret.created && !index.sessions.isEmpty {
            warnings.add("\(secret.source): no package secret was there, so a new one was made: every slide is encrypted anew")
        }
        if FileManager.default.fileExists(atPath: package.legacySecretURL.path) {
            warnings.add("\(package.legacySecretURL.path): a secret file inside the package folder, where a copy or sync of the folder "
                + "ships it; this build does not read it (it uses \(secret.source)): move it out")
        }
        try KeyTableWriter.settlePending(in: package, index: index)
        try package.tightenPrivateFolders()

        let journal = BuildJournal(package: package)
        let blobs = BlobBatch(store: package.assets)
        do {
            try package.makePartFolders(for: package.publicRoot)
            try package.makePartFolders(for: package.serverRoot)
            try AtomicFile.makeFolder(package.assets.folder)
            var decksDone: [[SlideOutcome]] = []
            for (session, deck) in zip(sessions, decks) {
                progress?(session.id, 0, deck.slideCount)
                let done = Counter()
                let cipher = SlideCipher(secret: secret.secret, packageId: index.packageId, sessionId: session.id)
                decksDone.append(try SlidePipeline.run(
                    deck: deck, cipher: cipher, blobs: blobs, workers: options.workers ?? deck.defaultWorkers,
                    progress: { progress?(session.id, done.increment(), deck.slideCount) }))
            }
            for image in loader.images.values.sorted(by: { $0.hash < $1.hash }) {
                if try blobs.put(image.bytes, hash: image.hash) { report.newImages += 1 } else { report.reusedImages += 1 }
                report.imageBytes += image.bytes.count
                if image.bytes.count > report.largestImage?.bytes ?? -1 { report.largestImage = (image.path, image.bytes.count) }
            }
            // Blobs first: every manifest and blob list written below names only blobs already in place.
            journal.blobs = blobs.hashes
            try blobs.commit()
            let publisher = Publisher(package: package, journal: journal, publishedAt: publishedAt)
            for (session, (deck, outcomes)) in zip(sessions, zip(decks, decksDone)) {
                report.sessions.append(try publisher.publish(session, deck: deck, outcomes: outcomes, index: &index, keyTables: keyTables))
            }
            if let series {
                report.documents += try publisher.publish(series, sessionIds: sessions.map(\.id), index: &index)
            }
            report.documents += try publisher.refreshLinkedSeries(index: &index, skipping: series?.id)
            try journal.commit(index)
        } catch {
            // Nothing new is referenced yet: take the new files away so the folder is as it was.
            blobs.discard(committed: journal.rollBack() ? journal.blobs : [])
            throw error
        }
        // Same deckVersion, new packageVersion: the pending table takes the table's place only now that
        // the index names the new version (a kill right here is finished by the next build).
        for pending in journal.pendingKeyTables { try KeyTableWriter.promote(pending) }
        let plaintext = keyTables.sealRemaining(in: package, index: index)
        if !plaintext.isEmpty {
            throw StoreError(path: package.keysFolder.path, "the build is done, but these key tables are still in plaintext: "
                + plaintext.joined(separator: ", ") + "; run the build again with --seal-to to seal them")
        }

        report.seconds = Date().timeIntervalSince(started)
        report.warnings = warnings.messages
        return report
    }

    /// The id of a package built for the first time: `--package-id`, the id of a public index left by a
    /// first build killed before its commit, or a new random one.
    private func newPackageId(_ package: PulsePackage, requested: PackageID?) throws -> PackageID {
        if let requested { return requested }
        if let id = try? package.publicPart.readIndex().packageId { return id }
        return try PackageID.random()
    }

    /// Now, or `SOURCE_DATE_EPOCH` (whole seconds since 1970) for a reproducible build.
    private func publishTime() throws -> Date {
        guard let text = options.environment["SOURCE_DATE_EPOCH"] else { return Date() }
        guard let seconds = Int(text), seconds >= 0 else {
            throw InputError(file: "$SOURCE_DATE_EPOCH", "\"\(text)\" is not whole seconds since 1970")
        }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// `releaseAfterSlide` names a slide of the deck: 0-based, below the slide count.
    static func checkGated(_ session: SessionDescription, deck: Deck) throws {
        for (resource, path) in session.gated {
            guard let slide = resource.releaseAfterSlide, slide >= deck.slideCount else { continue }
            throw InputError(file: session.file.path, path: "\(path).releaseAfterSlide",
                "slide \(slide) is not in the deck: it has \(deck.slideCount) slides, numbered 0 to \(deck.slideCount - 1)")
        }
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
        for session in sessions {
            if let other = session.seriesId, other != series.id {
                throw InputError(file: session.file.path, path: "series",
                    "names series \"\(other)\", but it is built by series \"\(series.id)\" (\(options.input.path))")
            }
        }
        var ids = Set<String>()
        for session in sessions where !ids.insert(session.id).inserted {
            throw InputError(file: session.file.path, path: "id", "session \"\(session.id)\" appears twice in the series")
        }
        for link in series.linkedSessionIds where !ids.contains(link.id) {
            throw InputError(file: options.input.path, path: link.path, "names session \"\(link.id)\", which the series does not list")
        }
        return (series, sessions)
    }
}

/// The files a build created before its commit (removed again if it fails), the commit itself, and the
/// pending key tables to promote after it. Used by the building thread only (the slide threads write blobs
/// through `BlobBatch`), so it has no lock.
final class BuildJournal {
    let package: PulsePackage
    private var files: [URL] = []
    /// Blobs this build added (committed with the batch, so not yet named by any manifest).
    var blobs: [Digest] = []
    /// Key tables written beside their table, to take its place after the commit.
    var pendingKeyTables: [URL] = []
    /// The public index before this build replaced it: restored if the server index cannot be written.
    private var previousPublicIndex: Data??

    init(package: PulsePackage) { self.package = package }

    func created(_ url: URL) { files.append(url) }

    /// Writes the public index, then the server index: the commit point.
    func commit(_ index: PackageIndex) throws {
        previousPublicIndex = .some(try? Data(contentsOf: package.publicIndexURL))
        try package.writeIndexes(index)
    }

    /// Removes the files this build created; false if the previous public index could not be put back
    /// (then every file stays, blobs included, for the index that names them).
    func rollBack() -> Bool {
        if case let .some(previous) = previousPublicIndex {
            // The new public index may name the files about to go: put the old one back first, and keep
            // the files if that fails (unreferenced files are harmless; a dangling index is not).
            do {
                if let previous { try AtomicFile.write(previous, to: package.publicIndexURL, mode: 0o644) }
                else { try? FileSystem.remove(package.publicIndexURL.path) }
            } catch { return false }
        }
        for url in files { try? FileSystem.remove(url.path) }
        files = []
        return true
    }
}

/// A thread-safe counter for progress.
final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func increment() -> Int { value.add(1, ordering: .relaxed).newValue }
}
