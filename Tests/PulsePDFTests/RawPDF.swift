/// Writes PDF files from object bodies in PDF syntax, for fixtures made at test time.
struct RawPDF {
    private var objects: [Int: [UInt8]] = [:]
    var version = "1.7"

    /// Object `number` with `body` (any PDF value).
    mutating func add(_ number: Int, _ body: String) {
        objects[number] = Array(body.utf8)
    }

    /// A stream object; `encoding` picks the filter its data is stored with.
    mutating func addStream(_ number: Int, _ dictionary: String = "", data: [UInt8], encoding: Encoding = .none) {
        let (filter, stored): (String, [UInt8]) =
            switch encoding {
            case .none: ("", data)
            case .flate: ("/Filter/FlateDecode", Zlib.stored(data))
            case .hex: ("/Filter/ASCIIHexDecode", Array((data.map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined() + ">").utf8))
            }
        objects[number] = Array("<<\(dictionary)\(filter)/Length \(stored.count)>>\nstream\n".utf8) + stored + Array("\nendstream".utf8)
    }

    mutating func addStream(_ number: Int, _ dictionary: String = "", text: String, encoding: Encoding = .none) {
        addStream(number, dictionary, data: Array(text.utf8), encoding: encoding)
    }

    enum Encoding { case none, flate, hex }

    /// The file: header, objects in number order, a cross-reference table, the trailer.
    func bytes(root: Int) -> [UInt8] {
        var out = Array("%PDF-\(version)\n%\u{e2}\u{e3}\n".utf8)
        var offsets: [Int: Int] = [:]
        for number in objects.keys.sorted() {
            offsets[number] = out.count
            out += Array("\(number) 0 obj\n".utf8) + objects[number]! + Array("\nendobj\n".utf8)
        }
        let size = (objects.keys.max() ?? 0) + 1
        let xref = out.count
        out += Array("xref\n0 \(size)\n0000000000 65535 f \n".utf8)
        for number in 1..<size {
            let entry = offsets[number].map { String(repeating: "0", count: 10 - String($0).count) + "\($0) 00000 n \n" } ?? "0000000000 65535 f \n"
            out += Array(entry.utf8)
        }
        out += Array("trailer\n<</Size \(size)/Root \(root) 0 R>>\nstartxref\n\(xref)\n%%EOF\n".utf8)
        return out
    }
}

/// zlib streams made of stored (uncompressed) deflate blocks: valid FlateDecode data without a
/// compressor, so fixtures exercise decoding while their text stays greppable.
enum Zlib {
    static func stored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var start = 0
        repeat {
            let end = min(start + 65535, data.count)
            let length = end - start
            out.append(end == data.count ? 1 : 0)
            out += [UInt8(length & 0xff), UInt8(length >> 8), UInt8(~length & 0xff), UInt8((~length >> 8) & 0xff)]
            out += data[start..<end]
            start = end
        } while start < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        let adler = b << 16 | a
        out += [UInt8(adler >> 24), UInt8((adler >> 16) & 0xff), UInt8((adler >> 8) & 0xff), UInt8(adler & 0xff)]
        return out
    }
}
