import Foundation
import PulseAge
import PulseCore
import PulseStore
import PulseSystem

/// Writes key tables in plaintext (0600) or, with `--seal-to`, only sealed to the key server with age.
///
/// A rebuild that keeps the deck (same deckVersion, same keys) but changes the manifest gives the table
/// a new packageVersion. The table must not name that version before `index.json` does, nor keep the
/// old one after: it is written beside the table as `<table>.pending-<packageVersion>` before the
/// commit and renamed over the table after it. A build killed in between leaves the pending file, and
/// the next build (`settlePending`) renames it if the index names its version, or removes it if not.
/// This works for sealed tables too, which the packager cannot read back.
///
/// When sealing is asked for, every plaintext table left in the package is sealed after the commit and
/// its plaintext removed (`sealRemaining`), so that adding `--seal-to` to an existing package never
/// leaves an unchanged session's keys in plaintext only.
struct KeyTableWriter {
    let recipients: [AgeRecipient]?
    static let pendingMarker = ".pending-"

    /// Parses the recipients up front, so a typo fails before any work.
    init(sealTo: [String]) throws {
        recipients = sealTo.isEmpty ? nil : try SealedKeyTable.recipients(sealTo)
    }

    var seals: Bool { recipients != nil }

    func url(for table: KeyTable, in package: PulsePackage) -> URL {
        recipients == nil
            ? package.keyTableURL(sessionId: table.sessionId, deckVersion: table.deckVersion)
            : SealedKeyTable.url(in: package, sessionId: table.sessionId, deckVersion: table.deckVersion)
    }

    /// True if a table of this session and deckVersion is there in the form this build writes (or, when
    /// not sealing, in either form: a build without `--seal-to` never adds a plaintext copy of a sealed table).
    func hasTable(_ table: KeyTable, in package: PulsePackage) -> Bool {
        let plain = package.keyTableURL(sessionId: table.sessionId, deckVersion: table.deckVersion)
        let sealed = SealedKeyTable.url(in: package, sessionId: table.sessionId, deckVersion: table.deckVersion)
        let exists = { (url: URL) in FileManager.default.fileExists(atPath: url.path) }
        return seals ? exists(sealed) : exists(plain) || exists(sealed)
    }

    func write(_ table: KeyTable, in package: PulsePackage) throws {
        try write(table, to: url(for: table, in: package), in: package)
    }

    /// Writes `table` as the pending replacement of its file; returns the pending file.
    func writePending(_ table: KeyTable, in package: PulsePackage) throws -> URL {
        let final = url(for: table, in: package)
        let pending = final.deletingLastPathComponent()
            .appendingPathComponent(final.lastPathComponent + Self.pendingMarker + table.packageVersion)
        try write(table, to: pending, in: package)
        return pending
    }

    private func write(_ table: KeyTable, to url: URL, in package: PulsePackage) throws {
        try package.writeKeyFile(try recipients.map { try SealedKeyTable.seal(table, to: $0) } ?? table.fileBytes, to: url)
    }

    /// Moves a pending table over its table (after the commit that names its packageVersion).
    static func promote(_ pending: URL) throws {
        let name = pending.lastPathComponent
        guard let marker = name.range(of: pendingMarker) else { return }
        let final = pending.deletingLastPathComponent().appendingPathComponent(String(name[..<marker.lowerBound]))
        try StoreError.wrapping { () throws(PathError) in try FileSystem.rename(pending.path, to: final.path) }
        try AtomicFile.syncFolder(final.deletingLastPathComponent())
    }

    /// Finishes what a build killed between its commit and its last step left: each pending table is
    /// promoted if the index names its session at its packageVersion, and removed otherwise.
    static func settlePending(in package: PulsePackage, index: PackageIndex) throws {
        for (session, folder, name) in tableFiles(in: package) {
            guard let marker = name.range(of: pendingMarker) else { continue }
            let pending = folder.appendingPathComponent(name)
            if index.sessions[session]?.packageVersion == String(name[marker.upperBound...]) {
                try promote(pending)
            } else {
                try? FileSystem.remove(pending.path)
            }
        }
    }

    /// Seals every plaintext key table still in the package and removes the plaintext; returns the
    /// tables that stay in plaintext, each with the reason (the caller reports them and fails).
    ///
    /// A plaintext table of a session's current deckVersion is sealed over the sealed one if it names
    /// the current packageVersion (it is then the newest), and only removed if not (the build has just
    /// written the current table sealed). Any other plaintext table is sealed unless a sealed one exists.
    func sealRemaining(in package: PulsePackage, index: PackageIndex) -> [String] {
        guard let recipients else { return [] }
        var left: [String] = []
        for (session, folder, name) in Self.tableFiles(in: package) where name.hasSuffix(".json") {
            let plain = folder.appendingPathComponent(name)
            let sealed = plain.appendingPathExtension(SealedKeyTable.fileExtension)
            do {
                let bytes = Array(try Data(contentsOf: plain))
                let table = try SealedKeyTable.decode(bytes, name: plain.path)
                let current = index.sessions[session]
                let isCurrentTable = current?.deckVersion == table.deckVersion
                let sealedExists = FileManager.default.fileExists(atPath: sealed.path)
                if isCurrentTable ? current?.packageVersion == table.packageVersion : !sealedExists {
                    try package.writeKeyFile(try Age.encrypt(bytes, to: recipients), to: sealed)
                }
                do throws(PathError) { try FileSystem.remove(plain.path) } catch {
                    throw StoreError.system(plain.path, "cannot remove the plaintext", errno: error.errno)
                }
            } catch {
                left.append("\(plain.path) (\(error))")
            }
        }
        return left
    }

    /// Every file in `server/keys/<session>/`, with its session and folder, sorted.
    static func tableFiles(in package: PulsePackage) -> [(session: String, folder: URL, name: String)] {
        let manager = FileManager.default
        var files: [(String, URL, String)] = []
        for session in ((try? manager.contentsOfDirectory(atPath: package.keysFolder.path)) ?? []).sorted() where !session.hasPrefix(".") {
            let folder = package.keysFolder.appendingPathComponent(session)
            for name in ((try? manager.contentsOfDirectory(atPath: folder.path)) ?? []).sorted() where !name.hasPrefix(".") {
                files.append((session, folder, name))
            }
        }
        return files
    }
}
