/// One attribute of an element. Its name is a `StaticString` (a literal in the code, never a string
/// made from data) checked once; its value is escaped when the page is rendered.
///
/// Names that would let a value run as script or style are refused: event handlers (`on…`), `style`
/// and `srcdoc`. The console's Content-Security-Policy forbids inline script and style anyway; refusing
/// them here makes the mistake visible at the first run instead of as a CSP report.
public struct Attribute: Sendable {
    enum Value: Sendable {
        case text(String)
        /// A boolean attribute that is set (`<input required>`).
        case present
        /// Not rendered (a boolean attribute that is off, `Attribute.none`).
        case absent
    }

    let name: [UInt8]
    let value: Value

    private init(bytes: [UInt8], value: Value) {
        self.name = bytes
        self.value = value
    }

    /// `name="value"`; `name` is a literal such as `"viewBox"`, `"aria-live"` or `"data-session"`.
    /// Traps on a name that is not one (letters, digits, `-`, `:`) or that is refused (see above): a
    /// mistake in the code, found the first time the page renders.
    public init(_ name: StaticString, _ value: String) {
        self.init(bytes: Self.checked(name), value: .text(value))
    }

    /// A boolean attribute (`disabled`, `required`, `hidden`, `checked`, …): present when `on`.
    public static func boolean(_ name: StaticString, _ on: Bool = true) -> Attribute {
        Attribute(bytes: checked(name), value: on ? .present : .absent)
    }

    /// No attribute: for `condition ? .class("x") : .none`.
    public static let none = Attribute(bytes: [], value: .absent)

    private static func checked(_ name: StaticString) -> [UInt8] {
        let text = name.description
        let bytes = Array(text.utf8)
        precondition(
            !bytes.isEmpty && bytes.allSatisfy { TextBytes.isNameByte($0) } && TextBytes.isLetter(bytes[0]),
            "PulseHTML: \"\(text)\" is not an attribute name")
        let lower = text.lowercased()
        precondition(
            !lower.hasPrefix("on") && lower != "style" && lower != "srcdoc",
            "PulseHTML: the \"\(text)\" attribute is refused (inline script or style; see Attribute)")
        return bytes
    }

    /// A name from the static table below: checked by `names`' construction.
    private init(known name: [UInt8], _ value: String) { self.init(bytes: name, value: .text(value)) }
    private init(known name: [UInt8], on: Bool) { self.init(bytes: name, value: on ? .present : .absent) }

    private enum Names {
        static let id = Array("id".utf8), `class` = Array("class".utf8), href = Array("href".utf8), src = Array("src".utf8)
        static let alt = Array("alt".utf8), type = Array("type".utf8), name = Array("name".utf8), value = Array("value".utf8)
        static let action = Array("action".utf8), method = Array("method".utf8), `for` = Array("for".utf8)
        static let rel = Array("rel".utf8), lang = Array("lang".utf8), title = Array("title".utf8)
        static let role = Array("role".utf8), content = Array("content".utf8), charset = Array("charset".utf8)
        static let width = Array("width".utf8), height = Array("height".utf8), scope = Array("scope".utf8)
        static let datetime = Array("datetime".utf8), colspan = Array("colspan".utf8), autocomplete = Array("autocomplete".utf8)
        static let disabled = Array("disabled".utf8), required = Array("required".utf8), hidden = Array("hidden".utf8)
        static let checked = Array("checked".utf8), selected = Array("selected".utf8), `defer` = Array("defer".utf8)
    }

    public static func id(_ value: String) -> Attribute { Attribute(known: Names.id, value) }
    public static func `class`(_ value: String) -> Attribute { Attribute(known: Names.class, value) }
    public static func href(_ value: String) -> Attribute { Attribute(known: Names.href, value) }
    public static func src(_ value: String) -> Attribute { Attribute(known: Names.src, value) }
    public static func alt(_ value: String) -> Attribute { Attribute(known: Names.alt, value) }
    public static func type(_ value: String) -> Attribute { Attribute(known: Names.type, value) }
    public static func name(_ value: String) -> Attribute { Attribute(known: Names.name, value) }
    public static func value(_ value: String) -> Attribute { Attribute(known: Names.value, value) }
    public static func action(_ value: String) -> Attribute { Attribute(known: Names.action, value) }
    public static func method(_ value: String) -> Attribute { Attribute(known: Names.method, value) }
    /// `for` of a `<label>`: the id of its control.
    public static func `for`(_ value: String) -> Attribute { Attribute(known: Names.for, value) }
    public static func rel(_ value: String) -> Attribute { Attribute(known: Names.rel, value) }
    public static func lang(_ value: String) -> Attribute { Attribute(known: Names.lang, value) }
    public static func title(_ value: String) -> Attribute { Attribute(known: Names.title, value) }
    public static func role(_ value: String) -> Attribute { Attribute(known: Names.role, value) }
    public static func content(_ value: String) -> Attribute { Attribute(known: Names.content, value) }
    public static func charset(_ value: String) -> Attribute { Attribute(known: Names.charset, value) }
    public static func width(_ value: String) -> Attribute { Attribute(known: Names.width, value) }
    public static func height(_ value: String) -> Attribute { Attribute(known: Names.height, value) }
    public static func scope(_ value: String) -> Attribute { Attribute(known: Names.scope, value) }
    public static func datetime(_ value: String) -> Attribute { Attribute(known: Names.datetime, value) }
    public static func colspan(_ value: Int) -> Attribute { Attribute(known: Names.colspan, String(value)) }
    public static func autocomplete(_ value: String) -> Attribute { Attribute(known: Names.autocomplete, value) }
    public static func disabled(_ on: Bool = true) -> Attribute { Attribute(known: Names.disabled, on: on) }
    public static func required(_ on: Bool = true) -> Attribute { Attribute(known: Names.required, on: on) }
    public static func hidden(_ on: Bool = true) -> Attribute { Attribute(known: Names.hidden, on: on) }
    public static func checked(_ on: Bool = true) -> Attribute { Attribute(known: Names.checked, on: on) }
    public static func selected(_ on: Bool = true) -> Attribute { Attribute(known: Names.selected, on: on) }
    /// `defer` of a `<script src>`.
    public static func `defer`(_ on: Bool = true) -> Attribute { Attribute(known: Names.defer, on: on) }

    /// ` name="value"`, ` name` (a boolean attribute; `name="name"` in SVG, as XML has no boolean
    /// attributes), or nothing.
    func render(into out: inout [UInt8], foreign: Bool) {
        switch value {
        case .absent:
            return
        case .present:
            out.append(0x20)
            out += name
            if foreign {
                out += [UInt8(ascii: "="), UInt8(ascii: "\"")]
                out += name
                out.append(UInt8(ascii: "\""))
            }
        case let .text(text):
            out.append(0x20)
            out += name
            out += [UInt8(ascii: "="), UInt8(ascii: "\"")]
            Escaping.appendEscaped(text, to: &out)
            out.append(UInt8(ascii: "\""))
        }
    }
}
