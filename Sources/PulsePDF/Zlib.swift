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

/// Inflates zlib streams with one `z_stream`, reset between streams: a slide's content streams are a
/// few hundred bytes, and setting up a new stream (what qpdf's decoding does) costs more than that.
final class Inflater {
    private var stream = z_stream()
    private let ready: Bool

    init() {
        ready = inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
    }

    deinit {
        if ready { inflateEnd(&stream) }
    }

    /// The inflated bytes, or nil if `data` is not one complete zlib stream (with `partial`: the bytes
    /// inflated before the data ended or went wrong, as viewers draw what they could inflate).
    func inflate(_ data: [UInt8], partial: Bool = false) -> [UInt8]? {
        guard ready, inflateReset(&stream) == Z_OK else { return nil }
        var out = [UInt8](repeating: 0, count: max(1024, data.count * 4))
        var produced = 0
        let status = data.withUnsafeBufferPointer { input -> Int32 in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = UInt32(input.count)
            while true {
                if produced == out.count { out += [UInt8](repeating: 0, count: out.count) }
                let status = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
                    stream.next_out = buffer.baseAddress! + produced
                    stream.avail_out = UInt32(buffer.count - produced)
                    let status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    produced = buffer.count - Int(stream.avail_out)
                    return status
                }
                // Z_BUF_ERROR with input left means the output was full: grow and go on.
                guard status == Z_OK || (status == Z_BUF_ERROR && stream.avail_in > 0 && produced == out.count) else { return status }
            }
        }
        stream.next_in = nil
        stream.next_out = nil
        guard status == Z_STREAM_END || partial else { return nil }
        out.removeLast(out.count - produced)
        return out
    }
}
