import Foundation
import PulseAge
import PulseCore
import PulseStore

/// Writes key tables in plaintext (0600) or, with `--seal-to`, only sealed to the key server with age.
///
/// A rebuild that keeps the deck (same deckVersion, same keys) but changes the manifest gives the table
/// a new packageVersion. The table must not name that version before `index.json` does, nor keep the
/// old one after: it is written beside the table as `<table>.pending-<packageVersion>` before the
/// commit and renamed over the table after it. A build killed in between leaves the pending file, and
/// the next build (`settlePending`) renames it if the index names its version, or removes it if not.
/// This works for sealed tables too, which the packager cannot read back.
struct KeyTableWriter {
    let recipients: [AgeRecipient]?
    static let pendingMarker = ".pending-"

    /// Parses the recipients up front, so a typo fails before any work.
    init(sealTo: [String]) throws {
        recipients = sealTo.isEmpty ? nil : try SealedKeyTable.recipients(sealTo)
    }

    func url(for table: KeyTable, in package: PulsePackage) -> URL {
        recipients == nil
            ? package.keyTableURL(sessionId: table.sessionId, deckVersion: table.deckVersion)
            : SealedKeyTable.url(in: package, sessionId: table.sessionId, deckVersion: table.deckVersion)
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
        guard rename(pending.path, final.path) == 0 else { throw StoreError.system(final.path, "rename", errno: errno) }
        try AtomicFile.syncFolder(final.deletingLastPathComponent())
    }

    /// Finishes what a build killed between its commit and its last step left: each pending table is
    /// promoted if the index names its session at its packageVersion, and removed otherwise.
    static func settlePending(in package: PulsePackage, index: PackageIndex) throws {
        let manager = FileManager.default
        for session in (try? manager.contentsOfDirectory(atPath: package.keysFolder.path)) ?? [] {
            let folder = package.keysFolder.appendingPathComponent(session)
            for name in (try? manager.contentsOfDirectory(atPath: folder.path)) ?? [] {
                guard let marker = name.range(of: pendingMarker) else { continue }
                let pending = folder.appendingPathComponent(name)
                if index.sessions[session]?.packageVersion == String(name[marker.upperBound...]) {
                    try promote(pending)
                } else {
                    unlink(pending.path)
                }
            }
        }
    }
}
