import PulseCore

// The import rules, the same on every storage: a storage reads what it holds inside the import's
// transaction, asks these, and writes. Any refusal is a `ServerError.conflict` that rolls the whole import
// back.

/// What storage holds for a session an import brings.
struct HeldSession {
    var packageId: PackageID
    var deckVersion: Int
    var packageVersion: String
    /// The encoded gated resources (`GatedResource.encode`).
    var gated: [UInt8]
}

/// The key table storage holds for the imported session's deck version.
struct HeldKeyTable {
    var digest: [UInt8]
    var packageId: PackageID
}

extension SessionImport {
    /// Refuses a session imported from another package (unless `--replace-package`) or an older deck than
    /// the one held. Returns true when the import replaces another package's session: its key tables must
    /// be dropped before anything else (another package's keys for the same deck versions differ).
    func replaces(_ held: HeldSession?, packageId: PackageID, options: ImportOptions) throws -> Bool {
        guard let held else { return false }
        if held.packageId != packageId {
            guard options.replacePackage else {
                throw ServerError.conflict(
                    "session \(id) was imported from package \(held.packageId), this is package \(packageId); "
                        + "nothing imported (pass --replace-package to replace it)")
            }
            return true
        }
        if held.deckVersion > deckVersion {
            throw ServerError.conflict(
                "session \(id): the server holds deckVersion \(held.deckVersion), this package has \(deckVersion) "
                    + "(an older copy of the package?); nothing imported")
        }
        return false
    }

    /// Refuses other keys for a deck version the server holds; true when the import changes nothing.
    /// `digest` is `keyTable.digest`, computed once by the caller, which stores it.
    func isUnchanged(
        _ held: HeldSession?, table heldTable: HeldKeyTable?, digest: [UInt8], packageId: PackageID, gated: [UInt8]
    ) throws -> Bool {
        if let heldTable, heldTable.digest != digest {
            throw ServerError.conflict(
                "session \(id) deckVersion \(keyTable.deckVersion): the server holds other keys for this deck version "
                    + "(from package \(heldTable.packageId); this is package \(packageId)); nothing imported")
        }
        guard let held, heldTable != nil else { return false }
        return held.packageId == packageId && held.packageVersion == packageVersion && held.deckVersion == deckVersion
            && held.gated == gated
    }

    /// What a written import did, given what was held before.
    func outcome(after held: HeldSession?) -> ImportSummary.SessionOutcome {
        guard let held else { return .new(deckVersion: deckVersion) }
        return held.deckVersion == deckVersion ? .manifest : .deck(from: held.deckVersion, to: deckVersion)
    }
}

extension SeriesImport {
    /// Refuses a series imported from another package (unless `--replace-package`); true when the import
    /// changes nothing.
    func isUnchanged(_ held: (packageId: PackageID, packageVersion: String)?, packageId: PackageID, options: ImportOptions) throws -> Bool {
        guard let held else { return false }
        if held.packageId != packageId, !options.replacePackage {
            throw ServerError.conflict(
                "series \(id) was imported from package \(held.packageId), this is package \(packageId); "
                    + "nothing imported (pass --replace-package to replace it)")
        }
        return held.packageId == packageId && held.packageVersion == packageVersion
    }
}
