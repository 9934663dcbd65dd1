import PulseCore

/// If-Range and Range, evaluated on raw header bytes (no `String` work on the hot path). If-None-Match is
/// PulseHTTPServer's `IfNoneMatch`, shared with pulse-server.
enum ConditionalHeaders {
    private static let quote: UInt8 = 0x22, comma: UInt8 = 0x2c, space: UInt8 = 0x20, tab: UInt8 = 0x09
    private static let dash: UInt8 = 0x2d

    /// True when If-Range `header` is exactly the strong entity-tag `"tag"` (a weak tag or a date never is).
    static func strongMatch(_ header: [UInt8], tag: [UInt8]) -> Bool {
        var start = 0, end = header.count
        while start < end, header[start] == space || header[start] == tab { start += 1 }
        while end > start, header[end - 1] == space || header[end - 1] == tab { end -= 1 }
        guard end - start == tag.count + 2, header[start] == quote, header[end - 1] == quote else { return false }
        return equal(header, from: start + 1, tag)
    }

    private static func equal(_ bytes: [UInt8], from start: Int, _ tag: [UInt8]) -> Bool {
        for offset in 0..<tag.count where bytes[start + offset] != tag[offset] { return false }
        return true
    }

    /// The outcome of a Range header against a representation of `length` bytes.
    enum RangeResult: Equatable {
        /// Serve the whole body: no usable Range (malformed, another unit, or several ranges).
        case whole
        /// Serve bytes `first...last`.
        case part(first: Int, last: Int)
        /// 416: the one range asked for lies outside the body.
        case unsatisfiable
    }

    /// Evaluates `Range: bytes=first-last | first- | -suffix` (RFC 9110 §14). Several ranges get the whole body.
    static func range(_ header: [UInt8], length: Int) -> RangeResult {
        let unit = Array("bytes=".utf8)
        guard header.count > unit.count else { return .whole }
        for index in 0..<unit.count where header[index] | 0x20 != unit[index] | 0x20 { return .whole }
        var spec = Array(header[unit.count...])
        while let last = spec.last, last == space || last == tab { spec.removeLast() }
        while let first = spec.first, first == space || first == tab { spec.removeFirst() }
        if spec.contains(comma) { return .whole }
        guard let dashIndex = spec.firstIndex(of: dash) else { return .whole }
        let firstText = spec[..<dashIndex], lastText = spec[(dashIndex + 1)...]
        if firstText.isEmpty {
            guard let suffix = number(lastText) else { return .whole }
            guard suffix > 0, length > 0 else { return .unsatisfiable }
            return .part(first: max(0, length - suffix), last: length - 1)
        }
        guard let first = number(firstText) else { return .whole }
        var last = length - 1
        if !lastText.isEmpty {
            guard let given = number(lastText) else { return .whole }
            guard given >= first else { return .whole }  // invalid range-spec: ignore the header
            last = min(given, length - 1)
        }
        guard first < length else { return .unsatisfiable }
        return .part(first: first, last: last)
    }

    /// Decimal digits only, at most 18 of them (no overflow); nil otherwise. RFC 9110 allows leading zeros here.
    private static func number(_ digits: ArraySlice<UInt8>) -> Int? { BoundedDecimal.parse(digits) }
}
