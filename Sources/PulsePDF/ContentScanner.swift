/// Reads a content stream for `ContentUse`.
///
/// Content the scanner cannot follow with certainty (an unterminated string, an inline image whose end
/// it has to guess) makes it fall back to every `/name` anywhere in the bytes, in every category, and
/// every glyph: a superset of what any reader could resolve, so pruning never removes what is drawn.
enum ContentScanner {
    /// - Parameter components: the number of color components of a named color space resource (to
    ///   find where an unfiltered inline image in that space ends), nil if unknown.
    static func use(of content: [UInt8], components: @escaping ([UInt8]) -> Int? = { _ in nil }) -> ContentUse {
        content.withUnsafeBufferPointer { bytes in
            var scanner = Scanner(bytes: bytes, components: components)
            if let use = scanner.scan() { return use }
            var glyphs = GlyphUse()
            glyphs.all = true
            return ContentUse(names: rawNames(in: bytes), glyphs: glyphs)
        }
    }

    /// Every `/name` in `bytes`, in every category.
    static func rawNames(in bytes: UnsafeBufferPointer<UInt8>) -> ResourceNames {
        var names = ResourceNames()
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "/") {
                let (name, end) = readName(bytes, from: index)
                names.insertEverywhere(name)
                index = end
            } else {
                index += 1
            }
        }
        return names
    }

    /// The name starting at `start` (a `/`), `#xx` escapes decoded, and the index after it.
    static func readName(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> (name: [UInt8], end: Int) {
        var name: [UInt8] = [UInt8(ascii: "/")]
        var index = start + 1
        while index < bytes.count, isRegular(bytes[index]) {
            let byte = bytes[index]
            if byte == UInt8(ascii: "#"), index + 2 < bytes.count, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                name.append(high << 4 | low)
                index += 3
            } else {
                name.append(byte)
                index += 1
            }
        }
        return (name, index)
    }

    // Character classes (§7.2.2) as bit masks: the scanner tests every byte.
    /// White space: NUL, TAB, LF, FF, CR, SPACE.
    private static let whitespace: UInt64 = 0x1_0000_3601
    /// White space and the delimiters below 64: `%`, `(`, `)`, `/`, `<`, `>`.
    private static let notRegularBelow64: UInt64 = 0x5000_8321_0000_3601
    /// Delimiters from 64 to 127: `[`, `]`, `{`, `}`.
    private static let delimitersFrom64: UInt64 = 0x2800_0000_2800_0000

    @inline(__always) static func isWhitespace(_ byte: UInt8) -> Bool { byte < 64 && (whitespace >> byte) & 1 != 0 }

    @inline(__always) static func isRegular(_ byte: UInt8) -> Bool {
        if byte < 64 { return (notRegularBelow64 >> byte) & 1 == 0 }
        if byte < 128 { return (delimitersFrom64 >> (byte - 64)) & 1 == 0 }
        return true
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// One pass over a content stream. `scan()` returns nil when the stream cannot be followed with
/// certainty (the caller then takes every name and every glyph).
private struct Scanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    var names = ResourceNames()
    var shown: [[UInt8]: CodeSet] = [:]
    var inherited = CodeSet()

    let components: ([UInt8]) -> Int?

    init(bytes: UnsafeBufferPointer<UInt8>, components: @escaping ([UInt8]) -> Int?) {
        self.bytes = bytes
        self.components = components
    }

    mutating func scan() -> ContentUse? {
        var lastName: Range<Int>?  // the last name operand (read only if an operator uses it)
        var strings: [Range<Int>] = []  // string operands since the last operator, with their delimiters
        var font: [UInt8]?  // the font selected by Tf; nil: not selected here (the caller's)
        var codes = CodeSet()  // shown with `font` since it was selected
        var saved: [[UInt8]?] = []  // q/Q: the font is part of the graphics state
        // The last name recorded in each category: most content selects the same few again and again.
        var recorded = [Range<Int>?](repeating: nil, count: ResourceCategory.allCases.count)
        var depth = 0  // inside arrays and dictionaries: operands, never operators
        func select(_ next: [UInt8]?) {
            guard next != font else { return }
            if !codes.isEmpty {
                if let font { shown[font, default: CodeSet()].formUnion(codes) } else { inherited.formUnion(codes) }
                codes = CodeSet()
            }
            font = next
        }
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if ContentScanner.isRegular(byte) {
                let start = index
                index += 1
                while index < count, ContentScanner.isRegular(bytes[index]) { index += 1 }
                guard depth == 0, Self.isOperator(byte) else { continue }
                let word = UnsafeBufferPointer(rebasing: bytes[start..<index])
                if let action = Action(word) {
                    let operand = lastName
                    switch action {
                    case let .name(category):
                        guard let operand else { break }
                        if let previous = recorded[category.rawValue], bytes[previous].elementsEqual(bytes[operand]) { break }
                        names.insert(ContentScanner.readName(bytes, from: operand.lowerBound).name, in: category)
                        recorded[category.rawValue] = operand
                    case .selectFont:
                        guard let operand else {
                            select(nil)
                            break
                        }
                        // Most text selects the font it already has: compare before making a name.
                        if let font, bytes[operand].elementsEqual(font) { break }
                        let name = ContentScanner.readName(bytes, from: operand.lowerBound).name
                        names.insert(name, in: .font)
                        select(name)
                    case .setGraphicsState:
                        if let operand { names.insert(ContentScanner.readName(bytes, from: operand.lowerBound).name, in: .extGState) }
                        select(nil)  // a graphics state may carry a /Font
                    case .inlineImage:
                        guard inlineImage() else { return nil }
                    case .save:
                        saved.append(font)
                    case .restore:
                        select(saved.popLast() ?? nil)
                    case .showText:
                        for string in strings { show(string, into: &codes) }
                    }
                }
                lastName = nil
                if !strings.isEmpty { strings.removeAll(keepingCapacity: true) }
                continue
            }
            switch byte {
            case _ where ContentScanner.isWhitespace(byte):
                index += 1
            case UInt8(ascii: "%"):
                while index < count, bytes[index] != 0x0a, bytes[index] != 0x0d { index += 1 }
            case UInt8(ascii: "/"):
                let start = index
                index += 1
                while index < count, ContentScanner.isRegular(bytes[index]) { index += 1 }
                if depth == 0 { lastName = start..<index }
            case UInt8(ascii: "("):
                let start = index
                guard skipLiteralString() else { return nil }
                strings.append(start..<index)
            case UInt8(ascii: "<"):
                if index + 1 < count, bytes[index + 1] == UInt8(ascii: "<") {
                    depth += 1
                    index += 2
                } else {
                    guard let close = firstIndex(of: UInt8(ascii: ">"), from: index + 1) else { return nil }
                    strings.append(index..<close + 1)
                    index = close + 1
                }
            case UInt8(ascii: ">"):
                guard index + 1 < count, bytes[index + 1] == UInt8(ascii: ">"), depth > 0 else { return nil }
                depth -= 1
                index += 2
            case UInt8(ascii: "["):
                depth += 1
                index += 1
            case UInt8(ascii: "]"):
                guard depth > 0 else { return nil }
                depth -= 1
                index += 1
            case UInt8(ascii: "{"), UInt8(ascii: "}"):
                index += 1
            default:  // ")" outside a string
                return nil
            }
        }
        guard depth == 0 else { return nil }
        select(nil)
        return ContentUse(names: names, glyphs: GlyphUse(byFont: [:], byName: shown, inherited: inherited, all: false))
    }

    /// What an operator means to the scanner (PDF 32000-1 §8.2, §9.4.3).
    private enum Action {
        /// A resource operator other than Tf and gs: its last name operand names a resource.
        case name(ResourceCategory)
        case selectFont, setGraphicsState, inlineImage, save, restore, showText

        init?(_ word: UnsafeBufferPointer<UInt8>) {
            switch word.count {
            case 1:
                switch word[0] {
                case UInt8(ascii: "q"): self = .save
                case UInt8(ascii: "Q"): self = .restore
                case UInt8(ascii: "'"), UInt8(ascii: "\""): self = .showText
                default: return nil
                }
            case 2:
                switch (word[0], word[1]) {
                case (UInt8(ascii: "T"), UInt8(ascii: "f")): self = .selectFont
                case (UInt8(ascii: "g"), UInt8(ascii: "s")): self = .setGraphicsState
                case (UInt8(ascii: "T"), UInt8(ascii: "j")), (UInt8(ascii: "T"), UInt8(ascii: "J")): self = .showText
                case (UInt8(ascii: "B"), UInt8(ascii: "I")): self = .inlineImage
                case (UInt8(ascii: "D"), UInt8(ascii: "o")): self = .name(.xObject)
                case (UInt8(ascii: "s"), UInt8(ascii: "h")): self = .name(.shading)
                case (UInt8(ascii: "c"), UInt8(ascii: "s")), (UInt8(ascii: "C"), UInt8(ascii: "S")): self = .name(.colorSpace)
                case (UInt8(ascii: "D"), UInt8(ascii: "P")): self = .name(.properties)
                default: return nil
                }
            case 3:
                switch (word[0], word[1], word[2]) {
                case (UInt8(ascii: "s"), UInt8(ascii: "c"), UInt8(ascii: "n")), (UInt8(ascii: "S"), UInt8(ascii: "C"), UInt8(ascii: "N")):
                    self = .name(.pattern)
                case (UInt8(ascii: "B"), UInt8(ascii: "D"), UInt8(ascii: "C")): self = .name(.properties)
                default: return nil
                }
            default:
                return nil
            }
        }
    }

    /// Adds the codes of a string operand (`(…)` or `<…>`, delimiters included) to `codes`.
    private func show(_ string: Range<Int>, into codes: inout CodeSet) {
        if bytes[string.lowerBound] == UInt8(ascii: "<") {
            var high: UInt8?
            for position in string.dropFirst().dropLast() {
                guard let digit = ContentScanner.hexValue(bytes[position]) else { continue }
                if let first = high {
                    codes.insert(first << 4 | digit)
                    high = nil
                } else {
                    high = digit
                }
            }
            if let first = high { codes.insert(first << 4) }
        } else {
            var position = string.lowerBound + 1
            let end = string.upperBound - 1
            while position < end {
                let byte = bytes[position]
                position += 1
                guard byte == UInt8(ascii: "\\"), position < end else {
                    codes.insert(byte)
                    continue
                }
                let escaped = bytes[position]
                position += 1
                switch escaped {
                case UInt8(ascii: "n"): codes.insert(0x0a)
                case UInt8(ascii: "r"): codes.insert(0x0d)
                case UInt8(ascii: "t"): codes.insert(0x09)
                case UInt8(ascii: "b"): codes.insert(0x08)
                case UInt8(ascii: "f"): codes.insert(0x0c)
                case UInt8(ascii: "0")...UInt8(ascii: "7"):
                    var value = Int(escaped - UInt8(ascii: "0"))
                    for _ in 0..<2 where position < end && (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(bytes[position]) {
                        value = value * 8 + Int(bytes[position] - UInt8(ascii: "0"))
                        position += 1
                    }
                    codes.insert(UInt8(truncatingIfNeeded: value))
                case 0x0a, 0x0d:
                    if escaped == 0x0d, position < end, bytes[position] == 0x0a { position += 1 }  // a line continuation
                default: codes.insert(escaped)
                }
            }
        }
    }

    /// Numbers start with a digit, a sign or a point; `true`, `false` and `null` are operands too.
    private static func isOperator(_ first: UInt8) -> Bool {
        switch first {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."): false
        default: true  // keywords: "true"/"false"/"null" reset nothing that matters (they name no resource)
        }
    }

    /// Skips `( … )` with nested parentheses and backslash escapes; false if it never closes.
    private mutating func skipLiteralString() -> Bool {
        var nesting = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "("):
                nesting += 1
                index += 1
            case UInt8(ascii: ")"):
                nesting -= 1
                index += 1
                if nesting == 0 { return true }
            default: index += 1
            }
        }
        return false
    }

    private func firstIndex(of byte: UInt8, from start: Int) -> Int? {
        var position = start
        while position < bytes.count {
            if bytes[position] == byte { return position }
            position += 1
        }
        return nil
    }

    /// `BI <key value …> ID <data> EI`: records the color space the image names and skips its data, by
    /// its computed length when it is unfiltered and its color space known, else up to the first `EI`
    /// between white space (a guess: then the caller takes every name in the stream).
    private mutating func inlineImage() -> Bool {
        var key: [UInt8]?
        var values: [[UInt8]: [UInt8]] = [:]  // key → a name or number value, as written
        var depth = 0
        while index < bytes.count {
            let byte = bytes[index]
            if ContentScanner.isWhitespace(byte) {
                index += 1
            } else if byte == UInt8(ascii: "/") {
                let (name, end) = ContentScanner.readName(bytes, from: index)
                index = end
                if depth > 0 {
                    // A name inside an array value (an Indexed space's base, a filter list): a color
                    // space resource perhaps; keeping an extra name costs nothing.
                    names.insert(name, in: .colorSpace)
                } else if let pending = key {
                    values[pending] = name
                    if pending == Array("/CS".utf8) || pending == Array("/ColorSpace".utf8) { names.insert(name, in: .colorSpace) }
                    key = nil
                } else {
                    key = name
                }
            } else if byte == UInt8(ascii: "[") {
                depth += 1
                index += 1
                if depth == 1, let pending = key { values[pending] = [byte] }
            } else if byte == UInt8(ascii: "]") {
                depth -= 1
                index += 1
                if depth == 0 { key = nil }
            } else if byte == UInt8(ascii: "(") {
                guard skipLiteralString() else { return false }
                if depth == 0 { key = nil }
            } else if byte == UInt8(ascii: "<") {
                guard let close = firstIndex(of: UInt8(ascii: ">"), from: index + 1) else { return false }
                index = close + 1
                if depth == 0 { key = nil }
            } else {
                let start = index
                while index < bytes.count, ContentScanner.isRegular(bytes[index]) { index += 1 }
                if index == start { return false }  // a stray delimiter
                let word = Array(bytes[start..<index])
                if depth == 0, key == nil, word == Array("ID".utf8) { return skipImageData(values) }
                if depth == 0, let pending = key {
                    values[pending] = word
                    key = nil
                }
            }
        }
        return false
    }

    private mutating func skipImageData(_ values: [[UInt8]: [UInt8]]) -> Bool {
        index += 1  // the single white-space byte after ID
        func value(_ keys: String...) -> [UInt8]? { keys.lazy.compactMap { values[Array($0.utf8)] }.first }
        func number(_ keys: String...) -> Int? {
            keys.lazy.compactMap { values[Array($0.utf8)] }.first.flatMap { Int(String(decoding: $0, as: UTF8.self)) }
        }
        let isMask = value("/IM", "/ImageMask") == Array("true".utf8)
        let space = value("/CS", "/ColorSpace")
        let components: Int? =
            switch space.map({ String(decoding: $0, as: UTF8.self) }) {
            case "/G", "/DeviceGray", "[": 1  // an array is an Indexed space: one component
            case "/RGB", "/DeviceRGB": 3
            case "/CMYK", "/DeviceCMYK": 4
            case nil: isMask ? 1 : nil
            default: self.components(space!)  // a color space resource
            }
        if value("/F", "/Filter") == nil, let width = number("/W", "/Width"), let height = number("/H", "/Height"),
            let components, width > 0, height > 0, width < 1 << 20, height < 1 << 20
        {
            let bits = isMask ? 1 : (number("/BPC", "/BitsPerComponent") ?? 8)
            let length = (width * components * bits + 7) / 8 * height
            var end = index + length
            while end < bytes.count, ContentScanner.isWhitespace(bytes[end]) { end += 1 }
            if end + 1 < bytes.count, bytes[end] == UInt8(ascii: "E"), bytes[end + 1] == UInt8(ascii: "I"),
                end + 2 == bytes.count || !ContentScanner.isRegular(bytes[end + 2])
            {
                index = end + 2
                return true
            }
        }
        return false  // filtered, or a color space we cannot size: the end of the data is a guess
    }
}
