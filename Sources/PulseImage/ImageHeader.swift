import Foundation

/// An image's format and pixel size, read from its header alone (no pixel is decoded).
public struct ImageHeader: Sendable, Equatable {
    public var format: ImageFormat
    public var width: Int
    public var height: Int

    public init(format: ImageFormat, width: Int, height: Int) {
        self.format = format
        self.width = width
        self.height = height
    }

    /// Reads the header at the start of `bytes`.
    /// - Parameter complete: `bytes` is the whole file. When false (only its first bytes), nil means the
    ///   header lies further on (a JPEG with large metadata before its frame header).
    /// - Throws: `ImageError` when the bytes are no image of ours or their header is damaged.
    public static func read(_ bytes: some ContiguousBytes, complete: Bool = true) throws(ImageError) -> ImageHeader? {
        try bytes.withUnsafeBytes { raw in
            Result { () throws(ImageError) in try parse(raw.bindMemory(to: UInt8.self), complete: complete) }
        }.get()
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, complete: Bool) throws(ImageError) -> ImageHeader? {
        guard let format = ImageFormat.sniff(bytes) else { throw ImageError("not a PNG, JPEG or WebP image") }
        let size: (Int, Int)?
        switch format {
        case .png: size = try png(bytes)
        case .jpeg: size = try jpeg(bytes, complete: complete)
        case .webp: size = try webp(bytes)
        }
        return size.map { ImageHeader(format: format, width: $0.0, height: $0.1) }
    }

    /// IHDR is the first chunk: width and height as 32-bit big-endian numbers at bytes 16 and 20.
    private static func png(_ bytes: UnsafeBufferPointer<UInt8>) throws(ImageError) -> (Int, Int) {
        guard bytes.count >= 24 else { throw ImageError("PNG header is truncated") }
        guard Array(bytes[12..<16]) == Array("IHDR".utf8) else { throw ImageError("PNG does not start with IHDR") }
        return (Int(be32(bytes, 16)), Int(be32(bytes, 20)))
    }

    /// Walks the marker segments up to the first start-of-frame (SOF0–SOF15 but DHT, JPG, DAC).
    private static func jpeg(_ bytes: UnsafeBufferPointer<UInt8>, complete: Bool) throws(ImageError) -> (Int, Int)? {
        var offset = 2
        while true {
            guard offset + 4 <= bytes.count else {
                if complete { throw ImageError("JPEG has no frame header (damaged)") }
                return nil
            }
            guard bytes[offset] == 0xff else { throw ImageError("JPEG header is damaged (no marker at byte \(offset))") }
            let marker = bytes[offset + 1]
            if marker == 0xff { offset += 1; continue }  // fill byte
            if marker == 0xd8 || marker == 0x01 || (0xd0...0xd7).contains(marker) { offset += 2; continue }
            if marker == 0xd9 || marker == 0xda { throw ImageError("JPEG has no frame header before its image data (damaged)") }
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length >= 2 else { throw ImageError("JPEG header is damaged (segment length \(length))") }
            if (0xc0...0xcf).contains(marker), marker != 0xc4, marker != 0xc8, marker != 0xcc {
                guard offset + 9 <= bytes.count else {
                    if complete { throw ImageError("JPEG frame header is truncated") }
                    return nil
                }
                let height = Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6])
                let width = Int(bytes[offset + 7]) << 8 | Int(bytes[offset + 8])
                return (width, height)
            }
            offset += 2 + length
        }
    }

    /// The first chunk: VP8 (lossy: 14-bit sizes after the start code), VP8L (lossless: 14-bit sizes
    /// minus one, packed) or VP8X (extended: 24-bit canvas sizes minus one).
    private static func webp(_ bytes: UnsafeBufferPointer<UInt8>) throws(ImageError) -> (Int, Int) {
        guard bytes.count >= 30 else { throw ImageError("WebP header is truncated") }
        let chunk = String(decoding: bytes[12..<16], as: UTF8.self)
        switch chunk {
        case "VP8 ":
            guard bytes[23] == 0x9d, bytes[24] == 0x01, bytes[25] == 0x2a else { throw ImageError("WebP (VP8) header is damaged") }
            return (Int(le16(bytes, 26) & 0x3fff), Int(le16(bytes, 28) & 0x3fff))
        case "VP8L":
            guard bytes[20] == 0x2f else { throw ImageError("WebP (VP8L) header is damaged") }
            let bits = UInt32(bytes[21]) | UInt32(bytes[22]) << 8 | UInt32(bytes[23]) << 16 | UInt32(bytes[24]) << 24
            return (Int(bits & 0x3fff) + 1, Int((bits >> 14) & 0x3fff) + 1)
        case "VP8X":
            let width = Int(bytes[24]) | Int(bytes[25]) << 8 | Int(bytes[26]) << 16
            let height = Int(bytes[27]) | Int(bytes[28]) << 8 | Int(bytes[29]) << 16
            return (width + 1, height + 1)
        default:
            throw ImageError("WebP starts with an unknown chunk \"\(chunk)\"")
        }
    }

    private static func be32(_ bytes: UnsafeBufferPointer<UInt8>, _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    private static func le16(_ bytes: UnsafeBufferPointer<UInt8>, _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }
}

/// What the tools accept as an image: its name says its format, its size is sane.
public enum ImageLimits {
    /// Pixels a side at most (a 16K display).
    public static let maxSide = 16_384
    /// Pixels in all at most.
    public static let maxPixels = 50_000_000
    /// Bytes of one image file at most: larger files are refused before they are read.
    public static let maxFileBytes = 64 * 1_000_000
    /// Public images (photos, logos) above this many bytes are warned about: every phone downloads them.
    public static let defaultWarnBytes = 2 * 1_000_000

    /// The format a file name's extension promises (`.png`, `.jpg`/`.jpeg`, `.webp`, any case), or nil.
    public static func format(forExtension name: String) -> ImageFormat? {
        guard let dot = name.lastIndex(of: ".") else { return nil }
        switch name[name.index(after: dot)...].lowercased() {
        case "png": return .png
        case "jpg", "jpeg": return .jpeg
        case "webp": return .webp
        default: return nil
        }
    }

    /// Nil if a file called `name` may hold an image of `format`, else what is wrong (one clause that
    /// follows the file's name: `is a PNG image, but its name ends in .jpg (JPEG): rename it to .png`).
    public static func nameProblem(format: ImageFormat, name: String) -> String? {
        guard let promised = self.format(forExtension: name) else {
            let ext = name.lastIndex(of: ".").map { "with \(name[$0...])" } ?? "without an extension"
            return "is a \(format.displayName) image named \(ext): name it \(format.fileExtension)"
        }
        guard promised == format else {
            return "is a \(format.displayName) image, but its name ends in \(name[name.lastIndex(of: ".")!...]) (\(promised.displayName)): "
                + "rename it to \(format.fileExtension)"
        }
        return nil
    }

    /// Nil if the pixel size is sane, else what is wrong.
    public static func sizeProblem(_ header: ImageHeader) -> String? {
        if header.width == 0 || header.height == 0 { return "declares \(header.width)×\(header.height) pixels (damaged)" }
        if header.width > maxSide || header.height > maxSide || header.width * header.height > maxPixels {
            return "is \(header.width)×\(header.height) pixels: too large (at most \(maxSide) a side and \(maxPixels / 1_000_000) megapixels)"
        }
        return nil
    }

    /// Nil if `header` is acceptable for a file called `name`, else what is wrong.
    public static func problem(with header: ImageHeader, name: String) -> String? {
        nameProblem(format: header.format, name: name) ?? sizeProblem(header)
    }
}

extension ImageFormat {
    /// `PNG`, `JPEG`, `WebP`.
    public var displayName: String {
        switch self {
        case .png: "PNG"
        case .jpeg: "JPEG"
        case .webp: "WebP"
        }
    }

    /// `.png`, `.jpg`, `.webp`.
    public var fileExtension: String {
        switch self {
        case .png: ".png"
        case .jpeg: ".jpg"
        case .webp: ".webp"
        }
    }
}
