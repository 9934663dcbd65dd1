/// zlib (RFC 1950) / DEFLATE (RFC 1951) decompression, for the CCTV vectors marked
/// `compressed: zlib`. Test support only: the product never inflates anything. A small canonical-
/// Huffman decoder in the manner of zlib's puff.c; the Adler-32 trailer is checked, so a decoding
/// mistake cannot pass as a different age file.
struct Inflate {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let input: [UInt8]
    private var position: Int
    private var bitBuffer = 0
    private var bitCount = 0
    private var output: [UInt8] = []

    private init(_ input: [UInt8], from position: Int) {
        self.input = input
        self.position = position
    }

    /// The decompressed bytes of a zlib stream with nothing after it.
    static func zlib(_ data: [UInt8]) throws -> [UInt8] {
        guard data.count >= 6 else { throw Failure(description: "zlib: too short") }
        let header = UInt16(data[0]) << 8 | UInt16(data[1])
        guard data[0] & 0x0f == 8, header % 31 == 0, data[1] & 0x20 == 0 else {
            throw Failure(description: "zlib: not a deflate stream without a preset dictionary")
        }
        var inflater = Inflate(data, from: 2)
        try inflater.blocks()
        let end = inflater.position
        guard end + 4 == data.count else { throw Failure(description: "zlib: \(data.count - end - 4) bytes after the stream") }
        let stored = data[end..<end + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard stored == adler32(inflater.output) else { throw Failure(description: "zlib: Adler-32 mismatch") }
        return inflater.output
    }

    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        var index = 0
        while index < bytes.count {
            let end = min(index + 5552, bytes.count)  // the most bytes before b can overflow
            while index < end {
                a += UInt32(bytes[index])
                b += a
                index += 1
            }
            a %= 65521
            b %= 65521
        }
        return b << 16 | a
    }

    // MARK: bits and Huffman codes

    private mutating func bits(_ count: Int) throws -> Int {
        while bitCount < count {
            guard position < input.count else { throw Failure(description: "deflate: truncated") }
            bitBuffer |= Int(input[position]) << bitCount
            position += 1
            bitCount += 8
        }
        let value = bitBuffer & ((1 << count) - 1)
        bitBuffer >>= count
        bitCount -= count
        return value
    }

    /// A canonical Huffman code: how many codes of each length, and the symbols in code order.
    private struct Huffman {
        var counts = [Int](repeating: 0, count: 16)
        var symbols: [Int] = []

        init(lengths: [Int]) throws {
            for length in lengths { counts[length] += 1 }
            counts[0] = 0
            var left = 1
            for length in 1...15 {
                left = left * 2 - counts[length]
                guard left >= 0 else { throw Failure(description: "deflate: over-subscribed code") }
            }
            var offsets = [Int](repeating: 0, count: 16)
            for length in 1..<15 { offsets[length + 1] = offsets[length] + counts[length] }
            symbols = [Int](repeating: 0, count: lengths.count)
            for (symbol, length) in lengths.enumerated() where length != 0 {
                symbols[offsets[length]] = symbol
                offsets[length] += 1
            }
        }
    }

    private mutating func decode(_ code: Huffman) throws -> Int {
        var value = 0, first = 0, index = 0
        for length in 1...15 {
            value |= try bits(1)
            let count = code.counts[length]
            if value - first < count { return code.symbols[index + value - first] }
            index += count
            first = (first + count) << 1
            value <<= 1
        }
        throw Failure(description: "deflate: invalid code")
    }

    // MARK: blocks

    private mutating func blocks() throws {
        var final = 0
        repeat {
            final = try bits(1)
            switch try bits(2) {
            case 0: try stored()
            case 1: try codes(Self.fixedLengths, Self.fixedDistances)
            case 2: try dynamic()
            default: throw Failure(description: "deflate: reserved block type")
            }
        } while final == 0
        bitBuffer = 0  // the rest of the last byte is padding
        bitCount = 0
    }

    private mutating func stored() throws {
        bitBuffer = 0
        bitCount = 0
        guard position + 4 <= input.count else { throw Failure(description: "deflate: truncated stored block") }
        let length = Int(input[position]) | Int(input[position + 1]) << 8
        let complement = Int(input[position + 2]) | Int(input[position + 3]) << 8
        guard length == ~complement & 0xffff else { throw Failure(description: "deflate: stored length mismatch") }
        position += 4
        guard position + length <= input.count else { throw Failure(description: "deflate: truncated stored block") }
        output += input[position..<position + length]
        position += length
    }

    private static let lengthBase = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    private static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    private static let distanceBase = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
                                       2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]
    private static let distanceExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]

    private static let fixedLengths = try! Huffman(
        lengths: [Int](repeating: 8, count: 144) + [Int](repeating: 9, count: 112) + [Int](repeating: 7, count: 24) + [Int](repeating: 8, count: 8))
    private static let fixedDistances = try! Huffman(lengths: [Int](repeating: 5, count: 30))

    private mutating func codes(_ lengths: Huffman, _ distances: Huffman) throws {
        while true {
            let symbol = try decode(lengths)
            if symbol < 256 {
                output.append(UInt8(symbol))
                continue
            }
            if symbol == 256 { return }
            let index = symbol - 257
            guard index < 29 else { throw Failure(description: "deflate: bad length symbol") }
            let length = Self.lengthBase[index] + (try bits(Self.lengthExtra[index]))
            let distanceSymbol = try decode(distances)
            guard distanceSymbol < 30 else { throw Failure(description: "deflate: bad distance symbol") }
            let distance = Self.distanceBase[distanceSymbol] + (try bits(Self.distanceExtra[distanceSymbol]))
            guard distance <= output.count else { throw Failure(description: "deflate: distance too far back") }
            let from = output.count - distance
            for offset in 0..<length { output.append(output[from + offset]) }  // may overlap: byte by byte
        }
    }

    private mutating func dynamic() throws {
        let literalCount = try bits(5) + 257, distanceCount = try bits(5) + 1, codeCount = try bits(4) + 4
        guard literalCount <= 286, distanceCount <= 30 else { throw Failure(description: "deflate: too many codes") }
        let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
        var codeLengths = [Int](repeating: 0, count: 19)
        for index in 0..<codeCount { codeLengths[order[index]] = try bits(3) }
        let lengthCode = try Huffman(lengths: codeLengths)
        var lengths: [Int] = []
        while lengths.count < literalCount + distanceCount {
            let symbol = try decode(lengthCode)
            switch symbol {
            case 0..<16: lengths.append(symbol)
            case 16:
                guard let previous = lengths.last else { throw Failure(description: "deflate: repeat with no previous length") }
                lengths += [Int](repeating: previous, count: 3 + (try bits(2)))
            case 17: lengths += [Int](repeating: 0, count: 3 + (try bits(3)))
            default: lengths += [Int](repeating: 0, count: 11 + (try bits(7)))
            }
        }
        guard lengths.count == literalCount + distanceCount, lengths[256] != 0 else {
            throw Failure(description: "deflate: bad code lengths")
        }
        try codes(Huffman(lengths: Array(lengths[..<literalCount])), Huffman(lengths: Array(lengths[literalCount...])))
    }
}
