/// The kinds of named resource a content stream can use, each a sub-dictionary of `/Resources`.
enum ResourceCategory: Int, CaseIterable {
    case font, xObject, extGState, colorSpace, pattern, shading, properties

    /// The key of this category in a resource dictionary, as qpdf spells keys (with the slash).
    var key: [UInt8] {
        switch self {
        case .font: Array("/Font".utf8)
        case .xObject: Array("/XObject".utf8)
        case .extGState: Array("/ExtGState".utf8)
        case .colorSpace: Array("/ColorSpace".utf8)
        case .pattern: Array("/Pattern".utf8)
        case .shading: Array("/Shading".utf8)
        case .properties: Array("/Properties".utf8)
        }
    }

    /// The category whose sub-dictionary of `/Resources` has this key.
    init?(key: [UInt8]) {
        guard let category = Self.allCases.first(where: { $0.key == key }) else { return nil }
        self = category
    }

    /// The category whose resource `operator` names with its last name operand (PDF 32000-1 §7.8.3).
    static func namedBy(operator op: UnsafeBufferPointer<UInt8>) -> ResourceCategory? {
        switch op.count {
        case 2:
            let a = op[0], b = op[1]
            switch (a, b) {
            case (UInt8(ascii: "T"), UInt8(ascii: "f")): return .font
            case (UInt8(ascii: "D"), UInt8(ascii: "o")): return .xObject
            case (UInt8(ascii: "g"), UInt8(ascii: "s")): return .extGState
            case (UInt8(ascii: "s"), UInt8(ascii: "h")): return .shading
            case (UInt8(ascii: "c"), UInt8(ascii: "s")), (UInt8(ascii: "C"), UInt8(ascii: "S")): return .colorSpace
            case (UInt8(ascii: "D"), UInt8(ascii: "P")): return .properties
            default: return nil
            }
        case 3:
            switch (op[0], op[1], op[2]) {
            case (UInt8(ascii: "s"), UInt8(ascii: "c"), UInt8(ascii: "n")), (UInt8(ascii: "S"), UInt8(ascii: "C"), UInt8(ascii: "N")): return .pattern
            case (UInt8(ascii: "B"), UInt8(ascii: "D"), UInt8(ascii: "C")): return .properties
            default: return nil
            }
        default:
            return nil
        }
    }
}

/// Resource names, by category, as they appear in resource dictionaries: with the leading slash and
/// `#xx` escapes decoded (the bytes qpdf gives for a dictionary key).
struct ResourceNames: Equatable {
    private var sets: [Set<[UInt8]>] = Array(repeating: [], count: ResourceCategory.allCases.count)

    /// The color spaces used whenever a page paints in a device color space (§8.6.5.6): never pruned.
    static let defaultColorSpaces: [[UInt8]] = ["/DefaultGray", "/DefaultRGB", "/DefaultCMYK"].map { Array($0.utf8) }

    subscript(category: ResourceCategory) -> Set<[UInt8]> {
        get { sets[category.rawValue] }
        set { sets[category.rawValue] = newValue }
    }

    var isEmpty: Bool { sets.allSatisfy(\.isEmpty) }

    /// Adds `name`; true if it was new.
    @discardableResult
    mutating func insert(_ name: [UInt8], in category: ResourceCategory) -> Bool {
        sets[category.rawValue].insert(name).inserted
    }

    /// Adds `name` to every category (for names whose use could not be told apart).
    mutating func insertEverywhere(_ name: [UInt8]) {
        for index in sets.indices { sets[index].insert(name) }
    }

    /// Adds every name of `other`; true if any was new.
    @discardableResult
    mutating func formUnion(_ other: ResourceNames) -> Bool {
        var grew = false
        for index in sets.indices where !other.sets[index].isSubset(of: sets[index]) {
            sets[index].formUnion(other.sets[index])
            grew = true
        }
        return grew
    }
}
