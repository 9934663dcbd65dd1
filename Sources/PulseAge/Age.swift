import PulseCrypto

/// age v1 file encryption (c2sp.org/age) with X25519 recipients: files that `age -d` opens, and
/// opening files that `age -r` wrote. Whole files in memory: sized for key tables, not for videos
/// (`AgeLimits` caps file size and stanza count).
public enum Age {
    static let fileKeyByteCount = 16

    /// Encrypts `plaintext` to each `age1…` recipient.
    /// - Throws: `AgeError.badRecipient` or `.missing` before any work is done.
    public static func encrypt(_ plaintext: [UInt8], to recipients: [String]) throws -> [UInt8] {
        try encrypt(plaintext, to: recipients.map { text throws(AgeError) in try AgeRecipient(parsing: text) })
    }

    /// Encrypts `plaintext` to parsed recipients.
    /// - Throws: `AgeError.tooLarge` when the file would be over `AgeLimits` (we never write a file
    ///   we would refuse to open).
    public static func encrypt(_ plaintext: [UInt8], to recipients: [AgeRecipient]) throws -> [UInt8] {
        guard !recipients.isEmpty else { throw AgeError.missing("no recipient given") }
        guard recipients.count <= AgeLimits.maxStanzaCount else {
            throw AgeError.tooLarge("\(recipients.count) recipients; an age file here has at most \(AgeLimits.maxStanzaCount)")
        }
        let fileKey = try SecretBytes.random(count: fileKeyByteCount)
        let stanzas = try recipients.map { try $0.wrap(fileKey: fileKey) }
        let header = try AgeHeader.encode(stanzas: stanzas, fileKey: fileKey)
        let size = header.count + AgeStream.sealedSize(plaintextByteCount: plaintext.count)
        guard size <= AgeLimits.maxFileByteCount else {
            throw AgeError.tooLarge("the sealed file would be \(size) bytes; age files here are at most \(AgeLimits.describe(AgeLimits.maxFileByteCount))")
        }
        return try header + AgeStream.encrypt(plaintext, fileKey: fileKey)
    }

    /// Decrypts an age file (binary, or ASCII-armored as `age -a` writes) with any of `identities`.
    /// Each string is an identity file's text (or one `AGE-SECRET-KEY-1…` line); `#` lines are skipped.
    /// - Throws: `AgeError` for anything wrong with the file or the identities.
    public static func decrypt(_ file: [UInt8], identities: [String]) throws -> [UInt8] {
        var parsed: [AgeIdentity] = []
        for text in identities { parsed += try AgeIdentity.parseFile(text, name: "identity") }
        return try decrypt(file, identities: parsed)
    }

    /// Decrypts an age file with any of the parsed `identities`.
    public static func decrypt(_ file: [UInt8], identities: [AgeIdentity]) throws -> [UInt8] {
        var plaintext: [UInt8] = []
        try decrypt(file, identities: identities) { plaintext += $0 }
        return plaintext
    }

    /// Decrypts an age file, handing the plaintext to `deliver` chunk by chunk as each authenticates.
    /// The public API collects it and releases nothing if any chunk fails; the CCTV vectors use this
    /// to check what a streaming reader would have released before the failure.
    static func decrypt(_ file: [UInt8], identities: [AgeIdentity], deliver: ([UInt8]) -> Void) throws {
        guard !identities.isEmpty else { throw AgeError.missing("no identity given") }
        guard file.count <= AgeLimits.maxFileByteCount else {
            throw AgeError.tooLarge("the file is \(file.count) bytes; age files here are at most \(AgeLimits.describe(AgeLimits.maxFileByteCount))")
        }
        let file = AgeArmor.looksArmored(file) ? try AgeArmor.decode(file) : file
        let header = try AgeHeader.parse(file)
        try checkStanzas(header.stanzas)
        var fileKey: SecretBytes?
        for identity in identities {
            fileKey = try identity.unwrap(header.stanzas)
            if fileKey != nil { break }
        }
        guard let fileKey else { throw AgeError.noMatchingIdentity }
        let macKey = try AgeHeader.macKey(fileKey: fileKey)
        guard try HMACSHA256.isValid(header.mac, for: Array(header.macInput), key: macKey) else {
            throw AgeError.headerMACMismatch
        }
        try AgeStream.decrypt(file[header.payloadOffset...], fileKey: fileKey, deliver: deliver)
    }

    /// The rules the spec puts on stanzas before any is tried: X25519 stanzas have exactly one
    /// argument after the type, a canonical base64 32-byte share, and a 32-byte body; an scrypt
    /// stanza must be alone (and we cannot open it). Other types are ignored, as the spec requires.
    static func checkStanzas(_ stanzas: [AgeStanza]) throws(AgeError) {
        for (index, stanza) in stanzas.enumerated() {
            let number = index + 1
            switch stanza.type {
            case AgeRecipient.stanzaType:
                guard stanza.arguments.count == 2 else {
                    throw .malformedHeader("X25519 stanza \(number) has \(stanza.arguments.count - 1) arguments, needs 1")
                }
                guard let share = AgeBase64.decode(stanza.arguments[1]), share.count == X25519.keyByteCount else {
                    throw .malformedHeader("X25519 stanza \(number): the share is not canonical base64 of 32 bytes")
                }
                guard stanza.body.count == fileKeyByteCount + ChaCha20Poly1305.tagByteCount else {
                    throw .malformedHeader("X25519 stanza \(number): body is \(stanza.body.count) bytes, must be 32")
                }
            case "scrypt":
                guard stanzas.count == 1 else { throw .malformedHeader("an scrypt stanza must be the only stanza") }
                throw .unsupported("passphrase-encrypted (scrypt) age files are not supported: seal to a recipient")
            default:
                continue
            }
        }
    }
}
