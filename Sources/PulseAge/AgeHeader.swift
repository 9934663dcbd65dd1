import PulseCrypto

/// One recipient stanza: `-> <type> <args…>` and a base64 body wrapped at 64 columns.
struct AgeStanza: Equatable, Sendable {
    /// The arguments after `->`; the first names the recipient type (`X25519`, `scrypt`, …).
    var arguments: [String]
    var body: [UInt8]

    var type: String { arguments[0] }
}

/// The textual header of an age v1 file (c2sp.org/age): version line, stanzas, MAC line.
struct AgeHeader: Sendable {
    static let versionLine = Array("age-encryption.org/v1".utf8)
    static let versionPrefix = Array("age-encryption.org/".utf8)

    var stanzas: [AgeStanza]
    /// The 32-byte HMAC-SHA-256 from the `---` line.
    var mac: [UInt8]
    /// The header bytes the MAC covers: everything up to and including `---`.
    var macInput: ArraySlice<UInt8>
    /// Where the binary payload starts.
    var payloadOffset: Int

    /// The header with its MAC line, for `stanzas` wrapping `fileKey`.
    static func encode(stanzas: [AgeStanza], fileKey: SecretBytes) throws -> [UInt8] {
        var out = versionLine + [0x0a]
        for stanza in stanzas {
            out += Array(("-> " + stanza.arguments.joined(separator: " ")).utf8) + [0x0a]
            let body = AgeBase64.encodeBytes(stanza.body)
            var start = 0
            // Full 64-column lines, then a final shorter (possibly empty) line.
            while body.count - start >= 64 {
                out += body[start..<start + 64] + [0x0a]
                start += 64
            }
            out += body[start...] + [0x0a]
        }
        out += Array("---".utf8)
        let mac = try HMACSHA256.authenticationCode(for: out, key: try macKey(fileKey: fileKey))
        out += [0x20] + AgeBase64.encodeBytes(mac) + [0x0a]
        return out
    }

    /// `HKDF-SHA-256(ikm = file key, salt = empty, info = "header")`.
    static func macKey(fileKey: SecretBytes) throws -> [UInt8] {
        try HKDF.sha256(inputKeyMaterial: fileKey, salt: [], info: Array("header".utf8), count: 32)
    }

    /// Parses the header at the start of `file`, rejecting anything outside the v1 grammar.
    static func parse(_ file: [UInt8]) throws(AgeError) -> AgeHeader {
        guard file.starts(with: versionPrefix) else { throw .notAgeFile }
        var reader = LineReader(bytes: file)
        let version = try reader.line(what: "version line")
        guard version.elementsEqual(versionLine) else {
            let name = String(decoding: version.dropFirst(versionPrefix.count).prefix(40).map {
                $0 >= 0x20 && $0 < 0x7f ? $0 : 0x3f // "?" for anything unprintable: one clean line
            }, as: UTF8.self)
            throw .unsupportedVersion(name)
        }
        var stanzas: [AgeStanza] = []
        while true {
            let lineStart = reader.offset
            let line = try reader.line(what: "header")
            if line.starts(with: [0x2d, 0x2d, 0x2d]) { // "---"
                guard line.count == 4 + 43, line[line.startIndex + 3] == 0x20,
                      let mac = AgeBase64.decode(line.dropFirst(4)), mac.count == 32
                else { throw .malformedHeader("MAC line is not \"--- \" and 43 base64 characters") }
                guard !stanzas.isEmpty else { throw .malformedHeader("no recipient stanzas") }
                return AgeHeader(
                    stanzas: stanzas, mac: mac, macInput: file[0..<lineStart + 3], payloadOffset: reader.offset)
            }
            guard stanzas.count < AgeLimits.maxStanzaCount else {
                throw .tooLarge("the header has more than \(AgeLimits.maxStanzaCount) recipient stanzas")
            }
            guard line.starts(with: [0x2d, 0x3e, 0x20]) else { // "-> "
                throw .malformedHeader("line \(reader.lineNumber) is neither a stanza (\"-> \") nor the MAC (\"---\")")
            }
            let arguments = line.dropFirst(3).split(separator: 0x20, omittingEmptySubsequences: false)
            guard arguments.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0 >= 0x21 && $0 <= 0x7e } }) else {
                throw .malformedHeader("line \(reader.lineNumber): stanza arguments must be non-empty printable words")
            }
            var body: [UInt8] = []
            while true {
                let bodyLine = try reader.line(what: "stanza body")
                guard bodyLine.count <= 64, bodyLine.allSatisfy(AgeBase64.isAlphabet) else {
                    throw .malformedHeader("line \(reader.lineNumber): stanza body line is not base64 of at most 64 columns")
                }
                guard let bytes = AgeBase64.decode(bodyLine) else {
                    throw .malformedHeader("line \(reader.lineNumber): stanza body is not canonical base64")
                }
                body += bytes
                if bodyLine.count < 64 { break }
            }
            stanzas.append(AgeStanza(arguments: arguments.map { String(decoding: $0, as: UTF8.self) }, body: body))
        }
    }
}

/// Reads LF-terminated lines; a header line without its LF means the file is cut short.
private struct LineReader {
    let bytes: [UInt8]
    var offset = 0
    var lineNumber = 0

    mutating func line(what: String) throws(AgeError) -> ArraySlice<UInt8> {
        guard let end = bytes[offset...].firstIndex(of: 0x0a) else {
            throw .malformedHeader("\(what) is not terminated by a newline (truncated file?)")
        }
        defer { offset = end + 1 }
        lineNumber += 1
        return bytes[offset..<end]
    }
}
