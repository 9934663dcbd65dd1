/// A piece of a page: escaped text, a known element with attributes and children, or a fragment.
///
/// There is no case for raw markup. Text of any origin becomes text on the page, whatever it contains;
/// elements come only from the functions of `Node+Elements.swift`, attribute names only from literals
/// (`Attribute`). Views are plain functions from a model to a `Node`, tested by rendering them:
///
///     func deviceRow(_ device: DeviceView) -> Node {
///         tr {
///             td { bdi { device.name } }      // a device's name: hostile, and safe here
///             td(.class("num")) { String(device.rttMilliseconds) }
///         }
///     }
///
/// Inside a `@NodeBuilder` block a `String` is text, `for`, `if` and `switch` work, and an array of
/// nodes is spliced in. SVG elements (`svg`, `path`, `rect`, …) are part of the vocabulary, so charts
/// and the QR code (PulseQR) are nodes too and need no way around the escaping.
///
/// A node holds its markup, written when the node is made: text is escaped once, into a buffer with room
/// for the tags around it; an element puts its tags into its children's buffer (in place when the buffer
/// is theirs alone), so rendering a page is handing over its bytes. (A tree of enum values walked at
/// render time cost five times the instructions, most of them reference counting.)
public struct Node: Sendable {
    /// The markup: only this module's functions write it.
    var bytes: [UInt8]

    init(markup bytes: [UInt8]) { self.bytes = bytes }

    /// The buffer, moved out (this node keeps no reference, so the caller's is the only one).
    consuming func take() -> [UInt8] {
        let taken = bytes
        bytes = []
        return taken
    }

    /// Room kept after text for the tags of the elements around it, so they go in without a copy.
    static let slack = 48

    /// `text` as text: `<`, `&`, quotes and controls are escaped (see `Escaping`).
    public static func text(_ text: String) -> Node {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + slack)
        Escaping.appendEscaped(text, to: &bytes)
        return Node(markup: bytes)
    }

    /// Bytes that should be UTF-8 (a name as a device sent it) as text; sequences that are not UTF-8
    /// become U+FFFD.
    public static func text(utf8 bytes: some Collection<UInt8>) -> Node { text(String(decoding: bytes, as: UTF8.self)) }

    /// Nodes side by side, without an element around them.
    public static func fragment(_ nodes: [Node]) -> Node { Node(markup: NodeList(nodes).bytes) }

    /// Nodes side by side, without an element around them.
    public static func fragment(@NodeBuilder _ content: () -> NodeList) -> Node { Node(markup: content().bytes) }

    /// Nothing.
    public static let empty = Node(markup: [])

    /// `<!doctype html>`: the first node of a page (see `document`).
    public static let doctype = Node(markup: Array("<!doctype html>".utf8))

    /// An element of the vocabulary; `Node+Elements.swift` has one function per element.
    static func element(_ tag: Tag, _ attributes: [Attribute], _ children: consuming NodeList = NodeList()) -> Node {
        var bytes = children.take()
        // Without attributes, the tags go into the children's buffer: in place when it is theirs alone
        // and has room (text and the usual row do), else Array copies it once.
        if attributes.isEmpty, tag.kind == .normal {
            bytes.insert(contentsOf: tag.startClosed, at: 0)
            bytes += tag.end
            return Node(markup: bytes)
        }
        var out: [UInt8] = []
        out.reserveCapacity(tag.start.count + 2 + bytes.count + tag.end.count + attributes.count * 24 + slack)
        out += tag.start
        let foreign = tag.kind == .foreign
        for attribute in attributes { attribute.render(into: &out, foreign: foreign) }
        switch tag.kind {
        case .void:
            out.append(UInt8(ascii: ">"))
        case .foreign where bytes.isEmpty:
            out += [UInt8(ascii: "/"), UInt8(ascii: ">")]
        case .normal, .foreign:
            out.append(UInt8(ascii: ">"))
            out += bytes
            out += tag.end
        }
        return Node(markup: out)
    }

    /// A whole page: `<!doctype html>`, `<html lang>`, a `<head>` that starts with
    /// `<meta charset="utf-8">` (before any text, so no browser guesses the encoding) and the viewport
    /// for phones, then `head` and `body`.
    public static func document(lang: String = "en", @NodeBuilder head headContent: () -> NodeList, @NodeBuilder body bodyContent: () -> NodeList) -> Node {
        .fragment {
            Node.doctype
            html(.lang(lang)) {
                head {
                    meta(.charset("utf-8"))
                    meta(.name("viewport"), .content("width=device-width, initial-scale=1"))
                    headContent()
                }
                body { bodyContent() }
            }
        }
    }

    /// The node's bytes, ready for a response body.
    public func render() -> [UInt8] { bytes }

    /// Appends the node's bytes to `out`.
    public func render(into out: inout [UInt8]) { out += bytes }

    /// The markup as a `String` (tests, a golden page).
    public var renderedString: String { String(decoding: bytes, as: UTF8.self) }
}

/// The children a `@NodeBuilder` block makes, written one after another into one buffer, which the
/// element then puts its tags around. A helper that takes a block declares
/// `@NodeBuilder content: () -> NodeList` and places `content()` in its own block.
public struct NodeList: Sendable {
    var bytes: [UInt8]

    public init() { bytes = [] }
    init(_ node: consuming Node) { bytes = node.take() }

    init(_ nodes: [Node]) {
        bytes = []
        bytes.reserveCapacity(nodes.reduce(0) { $0 + $1.bytes.count } + Node.slack)
        for node in nodes { bytes += node.bytes }
    }

    /// `self` then `next`: in place when the buffer is this list's alone.
    consuming func appending(_ next: NodeList) -> NodeList {
        let needed = bytes.count + next.bytes.count
        // A block's first sibling has room for its own tags only: grow once for the rest of a row (by up
        // to 4 KB; past that, Array's doubling).
        if needed > bytes.capacity { bytes.reserveCapacity(needed + min(3 * needed, 4096) + Node.slack) }
        bytes += next.bytes
        return self
    }

    /// The buffer, moved out (this list keeps no reference, so the caller's is the only one).
    consuming func take() -> [UInt8] {
        let taken = bytes
        bytes = []
        return taken
    }

    init(joining lists: [NodeList]) {
        bytes = []
        bytes.reserveCapacity(lists.reduce(0) { $0 + $1.bytes.count } + Node.slack)
        for list in lists { bytes += list.bytes }
    }
}

/// Builds the children of an element from a block: nodes, strings (as text), arrays, `if`, `for`.
@resultBuilder
public enum NodeBuilder {
    public static func buildExpression(_ node: Node) -> NodeList { NodeList(node) }
    public static func buildExpression(_ text: String) -> NodeList { NodeList(.text(text)) }
    public static func buildExpression(_ nodes: [Node]) -> NodeList { NodeList(nodes) }
    public static func buildExpression(_ list: NodeList) -> NodeList { list }
    public static func buildPartialBlock(first: NodeList) -> NodeList { first }
    public static func buildPartialBlock(accumulated: consuming NodeList, next: NodeList) -> NodeList { accumulated.appending(next) }
    public static func buildBlock() -> NodeList { NodeList() }
    public static func buildOptional(_ list: NodeList?) -> NodeList { list ?? NodeList() }
    public static func buildEither(first list: NodeList) -> NodeList { list }
    public static func buildEither(second list: NodeList) -> NodeList { list }
    public static func buildArray(_ lists: [NodeList]) -> NodeList { NodeList(joining: lists) }
    public static func buildLimitedAvailability(_ list: NodeList) -> NodeList { list }
}
