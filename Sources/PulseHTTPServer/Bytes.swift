/// Byte comparisons of a request target's parts with literal bytes, for the routes every request is matched
/// against. `elementsEqual` walks two generic iterators (about 100 instructions a byte under callgrind: the asset
/// prefix check alone cost 1,800 of a 304's 30,000); these compare counts first, then index the bytes.
public enum Bytes {
    /// Whether `bytes` are exactly `literal`.
    @inlinable
    public static func equal(_ bytes: ArraySlice<UInt8>, _ literal: [UInt8]) -> Bool {
        guard bytes.count == literal.count else { return false }
        var index = bytes.startIndex
        for byte in literal {
            if bytes[index] != byte { return false }
            index += 1
        }
        return true
    }

    /// Whether `bytes` begin with `literal`.
    @inlinable
    public static func hasPrefix(_ bytes: ArraySlice<UInt8>, _ literal: [UInt8]) -> Bool {
        bytes.count >= literal.count && equal(bytes[bytes.startIndex..<(bytes.startIndex + literal.count)], literal)
    }
}
