/// The optional ASCII armor of age files (c2sp.org/age, "ASCII armor"): strict RFC 7468 PEM with the
/// label `AGE ENCRYPTED FILE`, padded base64 in 64-column lines. We read it (`age -a` output); we
/// never write it. Only whitespace may surround the block; LF and CRLF line ends are both accepted.
enum AgeArmor {
    static let begin = Array("-----BEGIN AGE ENCRYPTED FILE-----".utf8)
    static let end = Array("-----END AGE ENCRYPTED FILE-----".utf8)
    static let dashes = Array("-----".utf8)

    /// True if `file` (after leading whitespace) starts with the armor's BEGIN line.
    static func isArmored(_ file: [UInt8]) -> Bool {
        file.drop(while: isWhitespace).starts(with: begin)
    }

    /// True if `file` is not a binary age file but holds PEM-style dashes: it is meant as armor
    /// (perhaps with garbage before it, a wrong label or spaces in the BEGIN line), so the armor
    /// parser should say what is wrong rather than "not an age file".
    static func looksArmored(_ file: [UInt8]) -> Bool {
        guard !file.starts(with: AgeHeader.versionPrefix) else { return false }
        return isArmored(file) || file.indices.contains { file[$0...].starts(with: dashes) }
    }

    /// The binary age file inside the armor.
    static func decode(_ file: [UInt8]) throws(AgeError) -> [UInt8] {
        let trimmed = file.drop(while: isWhitespace).reversed().drop(while: isWhitespace).reversed()
        var lines = Array(trimmed).split(separator: 0x0a, omittingEmptySubsequences: false).map { line in
            line.last == 0x0d ? line.dropLast() : line
        }
        guard lines.count >= 2, lines.first!.elementsEqual(begin) else { throw bad("the first line is not -----BEGIN AGE ENCRYPTED FILE-----") }
        guard lines.last!.elementsEqual(end) else { throw bad("no END AGE ENCRYPTED FILE line after the base64") }
        lines = Array(lines.dropFirst().dropLast())
        var text: [UInt8] = []
        for (index, line) in lines.enumerated() {
            let isLast = index == lines.count - 1
            guard isLast ? (1...64).contains(line.count) : line.count == 64 else {
                throw bad("line \(index + 2) is \(line.count) columns; all but the last must be 64")
            }
            text += line
        }
        guard text.count % 4 == 0 else { throw bad("base64 is not padded to a multiple of 4") }
        let padding = text.reversed().prefix { $0 == 0x3d }.count
        guard padding <= 2, let bytes = AgeBase64.decode(text.dropLast(padding)) else {
            throw bad("not canonical base64")
        }
        return bytes
    }

    private static func bad(_ reason: String) -> AgeError {
        .malformedArmor(reason)
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0a || byte == 0x0d
    }
}
