import PulseCrypto

/// The trailer `/ID` of a written page, derived from its content.
///
/// `qpdf_set_deterministic_ID` makes qpdf hash the whole output with MD5 (in software, about a sixth
/// of the time it takes to write a page). We get the same property cheaper: qpdf writes its fixed
/// placeholder ID (`qpdf_set_static_ID`), then both halves of the placeholder are replaced with the
/// first 16 bytes of the SHA-256 of the file as written (hardware-accelerated). The replacement has the
/// same length, so no offset moves; equal pages get equal IDs and different pages different ones.
enum FileIdentifier {
    /// What qpdf writes for a static ID, twice, in the trailer (or the xref stream's dictionary).
    static let placeholder = Array("31415926535897932384626433832795".utf8)

    /// Replaces the placeholder pair at the end of `pdf`; false if it is not there.
    static func replacePlaceholder(in pdf: inout [UInt8]) -> Bool {
        // The trailer is in the last few hundred bytes; search backwards from the end only there.
        let window = max(0, pdf.count - 4096)
        guard let second = lastRange(of: placeholder, in: pdf, from: window),
            let first = lastRange(of: placeholder, in: pdf, from: window, before: second.lowerBound)
        else { return false }
        let identifier = Array(Hex.encode(SHA256.hash(pdf).prefix(16)).utf8)
        pdf.replaceSubrange(first, with: identifier)
        pdf.replaceSubrange(second, with: identifier)
        return true
    }

    private static func lastRange(of needle: [UInt8], in haystack: [UInt8], from start: Int, before end: Int? = nil) -> Range<Int>? {
        var index = (end ?? haystack.count) - needle.count
        while index >= start {
            if haystack[index] == needle[0], haystack[index..<index + needle.count].elementsEqual(needle) {
                return index..<index + needle.count
            }
            index -= 1
        }
        return nil
    }
}
