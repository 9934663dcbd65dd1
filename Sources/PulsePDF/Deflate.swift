import CZlib

/// zlib's deflate at its default level, as qpdf compresses the streams it writes.
enum Deflate {
    /// `data` as a zlib stream (level 6, the default window and memory level: `compress2`, which is what
    /// qpdf's `Pl_Flate` gets from `deflateInit` with the default level).
    static func compress(_ data: [UInt8]) -> [UInt8] {
        var length = compressBound(uLong(data.count))
        var out = [UInt8](repeating: 0, count: Int(length))
        let status = out.withUnsafeMutableBufferPointer { target in
            data.withUnsafeBufferPointer { source in
                compress2(target.baseAddress, &length, source.baseAddress, uLong(source.count), Z_DEFAULT_COMPRESSION)
            }
        }
        // compress2 into a compressBound-sized buffer cannot fail short of memory exhaustion.
        precondition(status == Z_OK, "zlib compress2 failed (\(status))")
        out.removeLast(out.count - Int(length))
        return out
    }
}
