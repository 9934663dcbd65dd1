import PulseCore
/// JSON string content from untrusted bytes, appended to a buffer: what lands in a log line is valid JSON and
/// valid UTF-8 whatever a client sent, one line (no raw control character), and shows on a terminal or a log
/// viewer as what it is.
///
/// - `"` and `\` are escaped; control characters (U+0000…U+001F, U+007F) and C1 controls as `\n`, `\t`, … or
///   `\u00XX`.
/// - Characters that reorder or hide text — bidi marks, embeddings, overrides and isolates (U+061C,
///   U+200E/F, U+202A…U+202E, U+2066…U+2069), zero-width ones (U+200B…U+200D, U+2060…U+2064, U+FEFF) and the
///   line separators U+2028/U+2029 — are escaped as `\uXXXX`, so they are seen, not obeyed.
/// - A byte that does not begin a well-formed UTF-8 sequence (stray continuation, overlong form, surrogate,
///   past U+10FFFF, truncated) becomes U+FFFD, as Go's encoding/json does.
/// - Other UTF-8 is copied as it is.
enum JSONText {
    static let hex: [UInt8] = Array("0123456789abcdef".utf8)
    static let upperHex: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// `"` + the escaped content + `"`.
    static func appendString<Bytes: Collection<UInt8>>(_ bytes: Bytes, to out: inout [UInt8]) {
        out.append(0x22)
        appendContent(Array(bytes), to: &out)
        out.append(0x22)
    }

    /// The escaped content of `bytes`, without quotes.
    static func appendContent<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, to out: inout [UInt8]) where Bytes.Index == Int {
        if !bytes.contains(where: { $0 < 0x20 || $0 >= 0x7f || $0 == 0x22 || $0 == 0x5c }) {  // the usual case: copy as is
            out.append(contentsOf: bytes)
            return
        }
        var index = bytes.startIndex
        var run = index
        let end = bytes.endIndex
        while index < end {
            let byte = bytes[index]
            if byte >= 0x20 && byte < 0x7f && byte != 0x22 && byte != 0x5c {
                index += 1
                continue
            }
            out.append(contentsOf: bytes[run..<index])
            if byte < 0x80 {
                appendEscapedASCII(byte, to: &out)
                index += 1
            } else if let (scalar, length) = UTF8Scalar.decode(bytes, at: index) {
                if hidesOrMoves(scalar) {
                    appendUnicodeEscape(scalar, to: &out)
                } else {
                    out.append(contentsOf: bytes[index..<(index + length)])
                }
                index += length
            } else {
                appendUnicodeEscape(0xfffd, to: &out)
                index += 1
            }
            run = index
        }
        out.append(contentsOf: bytes[run..<end])
    }

    /// A request target's path or query: bytes outside printable ASCII (space and controls included)
    /// percent-encoded, as they travel in a URL, so the value is ASCII and lossless; `"` and `\` escaped for
    /// JSON unless `json` is false (text that will be escaped as a whole later).
    static func appendURLContent<Bytes: RandomAccessCollection<UInt8>>(
        _ bytes: Bytes, to out: inout [UInt8], json: Bool = true
    ) where Bytes.Index == Int {
        if json ? isPlainURL(bytes) : !bytes.contains(where: { $0 &- 0x21 >= 0x5e }) {  // the usual case: copy as is
            out.append(contentsOf: bytes)
            return
        }
        var run = bytes.startIndex
        for index in bytes.indices {
            let byte = bytes[index]
            if byte > 0x20 && byte < 0x7f && ((byte != 0x22 && byte != 0x5c) || !json) { continue }
            out.append(contentsOf: bytes[run..<index])
            if byte == 0x22 || byte == 0x5c {
                out += [0x5c, byte]
            } else {
                out += [0x25, upperHex[Int(byte >> 4)], upperHex[Int(byte & 0x0f)]]  // upper case, as RFC 3986 prefers
            }
            run = index + 1
        }
        out.append(contentsOf: bytes[run..<bytes.endIndex])
    }

    /// True when `bytes` go into a JSON string as they are, as a URL part: printable ASCII, no `"`, no `\`.
    static func isPlainURL<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> Bool {
        for byte in bytes where byte &- 0x21 >= 0x5e || byte == 0x22 || byte == 0x5c { return false }
        return true
    }

    private static func appendEscapedASCII(_ byte: UInt8, to out: inout [UInt8]) {
        switch byte {
        case 0x22: out += [0x5c, 0x22]
        case 0x5c: out += [0x5c, 0x5c]
        case 0x0a: out += [0x5c, 0x6e]
        case 0x0d: out += [0x5c, 0x72]
        case 0x09: out += [0x5c, 0x74]
        case 0x08: out += [0x5c, 0x62]
        case 0x0c: out += [0x5c, 0x66]
        default: appendUnicodeEscape(UInt32(byte), to: &out)
        }
    }

    /// `\uXXXX` for a scalar of the Basic Multilingual Plane (every scalar escaped here is one).
    private static func appendUnicodeEscape(_ scalar: UInt32, to out: inout [UInt8]) {
        out += [
            0x5c, 0x75, hex[Int(scalar >> 12 & 0xf)], hex[Int(scalar >> 8 & 0xf)], hex[Int(scalar >> 4 & 0xf)], hex[Int(scalar & 0xf)],
        ]
    }

    /// C1 controls and the characters that reorder, hide or break text on a screen.
    static func hidesOrMoves(_ scalar: UInt32) -> Bool {
        switch scalar {
        case 0x80...0x9f, 0x061c, 0x200b...0x200f, 0x2028...0x202e, 0x2060...0x2064, 0x2066...0x2069, 0xfeff: true
        default: false
        }
    }
}
