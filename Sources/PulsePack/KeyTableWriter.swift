import Foundation
import PulseAge
import PulseCore
import PulseStore

/// Writes key tables in plaintext (0600) or, with `--seal-to`, only sealed to the key server with age.
struct KeyTableWriter {
    let recipients: [AgeRecipient]?

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
        if let recipients {
            try SealedKeyTable.write(table, sealedTo: recipients, in: package)
        } else {
            try package.writeKeyTable(table)
        }
    }
}
