/// The kinds of named resource a content stream can use, each a sub-dictionary of `/Resources`.
enum ResourceCategory: Int, CaseIterable {
    case font, xObject, extGState, colorSpace, pattern, shading, properties

    /// The key of this category in a resource dictionary, as qpdf spells keys (with the slash).
    var key: [UInt8] { Self.keys[rawValue] }

    private static let keys = ["/Font", "/XObject", "/ExtGState", "/ColorSpace", "/Pattern", "/Shading", "/Properties"].map { Array($0.utf8) }
    private static let byKey = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, ResourceCategory(rawValue: $0)!) })

    /// The category whose sub-dictionary of `/Resources` has this key.
    init?(key: [UInt8]) {
        guard let category = Self.byKey[key] else { return nil }
        self = category
    }
}

/// Resource names, by category, as they appear in resource dictionaries: with the leading slash and
/// `#xx` escapes decoded (the bytes qpdf gives for a dictionary key).
struct ResourceNames: Equatable {
    private var sets: [Set<[UInt8]>] = Array(repeating: [], count: ResourceCategory.allCases.count)

    /// The color spaces used whenever a page paints in a device color space (§8.6.5.6): never pruned.
    static let defaultColorSpaces: [[UInt8]] = ["/DefaultGray", "/DefaultRGB", "/DefaultCMYK"].map { Array($0.utf8) }

    subscript(category: ResourceCategory) -> Set<[UInt8]> {
        sets[category.rawValue]
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
