import Foundation
import PulseAge
import PulseCore
import PulseStore

/// Key tables sealed to the key server with age (docs/key-handoff.md).
///
/// `pulse-pack build --seal-to <age1…>` calls `write(_:sealedTo:in:)` instead of
/// `PulsePackage.writeKeyTable`, so the plaintext table never touches the disk; `keys seal` seals
/// tables that are already there. The sealed bytes open with `age -d -i <identity>` on the key server
/// into exactly the JSON `writeKeyTable` would have written.
public enum SealedKeyTable {
    /// Appended to the key table's file name: `server/keys/<sessionId>/<deckVersion>.json.age`.
    public static let fileExtension = "age"

    /// Parses `--seal-to` values; call it before a build does any work so a typo fails fast.
    /// - Throws: `AgeError.badRecipient` (exit 65) or `.missing` for an empty list.
    public static func recipients(_ strings: [String]) throws -> [AgeRecipient] {
        guard !strings.isEmpty else { throw AgeError.missing("no recipient given") }
        return try strings.map { text throws(AgeError) in try AgeRecipient(parsing: text) }
    }

    /// Where the sealed table of a session's deck version lives in a package.
    public static func url(in package: PulsePackage, sessionId: String, deckVersion: Int) -> URL {
        package.keyTableURL(sessionId: sessionId, deckVersion: deckVersion).appendingPathExtension(fileExtension)
    }

    /// The key table file's bytes (the same JSON as `PulsePackage.writeKeyTable`), sealed.
    public static func seal(_ table: KeyTable, to recipients: [AgeRecipient]) throws -> [UInt8] {
        try Age.encrypt(encode(table), to: recipients)
    }

    /// Seals `table` and writes it to `server/keys/<sessionId>/<deckVersion>.json.age` (0600, folders 0700),
    /// atomically. Nothing in plaintext is written.
    /// - Returns: the sealed file's URL.
    @discardableResult
    public static func write(_ table: KeyTable, sealedTo recipients: [AgeRecipient], in package: PulsePackage) throws -> URL {
        let sealed = try seal(table, to: recipients)
        let url = url(in: package, sessionId: table.sessionId, deckVersion: table.deckVersion)
        try package.writeKeyFile(sealed, to: url)
        return url
    }

    /// Opens a sealed key table.
    /// - Throws: `AgeError` for a wrong identity or a damaged file; `InputError` if the plaintext
    ///   is not a key table.
    public static func open(_ sealed: [UInt8], identities: [AgeIdentity], name: String = "sealed key table") throws -> KeyTable {
        try decode(Age.decrypt(sealed, identities: identities), name: name)
    }

    /// The JSON that `PulsePackage.writeKeyTable` writes: sorted keys, pretty, newline at the end.
    static func encode(_ table: KeyTable) throws -> [UInt8] {
        table.fileBytes
    }

    /// Decodes key-table JSON; the error never quotes the content (it holds keys).
    public static func decode(_ bytes: [UInt8], name: String) throws -> KeyTable {
        do { return try JSONValue.decode(KeyTable.self, from: bytes) } catch let error as JSONValue.SyntaxError {
            // The position only: a message could quote a character of a key.
            throw InputError(file: "\(name):\(error.line):\(error.column)", "not a key table (not valid JSON)")
        } catch {
            throw InputError(file: name, "not a key table (expected {sessionId, deckVersion, packageVersion, slides})")
        }
    }
}
