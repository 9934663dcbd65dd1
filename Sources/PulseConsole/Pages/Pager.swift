import PulseCore
import PulseHTML

/// The "Previous N" / "Next N" links of a long list (devices, codes and links, staff tokens): a page is
/// `?from=<offset>`, kept with the list's own query (a search).
struct Pager {
    let path: String
    /// The list's own query, already encoded (`q=ada&`), or "".
    var query: String = ""
    let from: Int
    let shown: Int
    let total: Int
    let size: Int
    let label: String

    /// `from` of a query: a whole number of at most 9 digits, else 0.
    static func from(_ fields: FormFields) -> Int {
        fields.text("from").flatMap { BoundedDecimal.parse($0, maxDigits: 9) }.map { Int($0) } ?? 0
    }

    var node: Node {
        guard from > 0 || from + shown < total else { return .empty }
        return nav(.class("pager"), Attribute("aria-label", label)) {
            if from > 0 { a(.href("\(path)?\(query)from=\(max(0, from - size))")) { "Previous \(size)" } }
            if from + shown < total { a(.href("\(path)?\(query)from=\(from + size)")) { "Next \(size)" } }
        }
    }
}
