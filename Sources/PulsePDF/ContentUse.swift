/// What a content stream uses: the resource names it gives (PDF 32000-1 §7.8: the last name operand
/// of each resource operator, `/F1 12 Tf`, `/Im0 Do`, `/GS0 gs`, `/Sh0 sh`, `/CS0 cs`, `/P0 scn`,
/// `/OC /MC0 BDC`, and the color space an inline image names), and the character codes it shows with
/// each font it selects (for Type 3 fonts, whose glyphs are content of their own).
struct ContentUse {
    var names = ResourceNames()
    var glyphs = GlyphUse()
}

/// Character codes shown, by the font they were shown with.
struct GlyphUse {
    /// By Type 3 font (resolved through the resources of the content that shows them).
    var byFont: [ObjectID: CodeSet] = [:]
    /// By font resource name, for names the content's own resources do not resolve.
    var byName: [[UInt8]: CodeSet] = [:]
    /// Shown with a font the content did not select itself (the caller's, or one set by a graphics
    /// state): they may be any font's.
    var inherited = CodeSet()
    /// The text could not be followed: every glyph of every font may be shown.
    var all = false

    mutating func formUnion(_ other: GlyphUse) {
        byFont.merge(other.byFont) { $0.union($1) }
        byName.merge(other.byName) { $0.union($1) }
        inherited.formUnion(other.inherited)
        all = all || other.all
    }
}

/// A set of one-byte character codes.
struct CodeSet: Hashable {
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    static func == (a: CodeSet, b: CodeSet) -> Bool { a.words == b.words }
    func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }

    var isEmpty: Bool { self == CodeSet() }

    func contains(_ code: UInt8) -> Bool {
        let bit = UInt64(1) << (code & 63)
        switch code >> 6 {
        case 0: return words.0 & bit != 0
        case 1: return words.1 & bit != 0
        case 2: return words.2 & bit != 0
        default: return words.3 & bit != 0
        }
    }

    mutating func insert(_ code: UInt8) {
        let bit = UInt64(1) << (code & 63)
        switch code >> 6 {
        case 0: words.0 |= bit
        case 1: words.1 |= bit
        case 2: words.2 |= bit
        default: words.3 |= bit
        }
    }

    mutating func formUnion(_ other: CodeSet) {
        words = (words.0 | other.words.0, words.1 | other.words.1, words.2 | other.words.2, words.3 | other.words.3)
    }

    func union(_ other: CodeSet) -> CodeSet {
        var result = self
        result.formUnion(other)
        return result
    }

    var codes: [UInt8] { (0...255).map(UInt8.init).filter(contains) }
}
