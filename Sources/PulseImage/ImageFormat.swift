import CZlib
import Foundation

/// The slide and photo formats we accept, recognised by their bytes (never by the file name).
public enum ImageFormat: String, Sendable, CaseIterable {
    case png, jpeg, webp

    /// The media type written into manifests.
    public var contentType: String {
        switch self {
        case .png: "image/png"
        case .jpeg: "image/jpeg"
        case .webp: "image/webp"
        }
    }

    /// The format whose signature starts `bytes`, or nil.
    public static func sniff(_ bytes: some Collection<UInt8>) -> ImageFormat? {
        let head = Array(bytes.prefix(12))
        if head.starts(with: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) { return .png }
        if head.starts(with: [0xff, 0xd8, 0xff]) { return .jpeg }
        if head.count == 12, head.starts(with: Array("RIFF".utf8)), Array(head[8..<12]) == Array("WEBP".utf8) { return .webp }
        return nil
    }

    /// Checks that `bytes` is a complete image of some format: the container is walked to its end
    /// (PNG chunks up to IEND, JPEG up to EOI, the WebP RIFF length), so a truncated file is caught
    /// before it is packaged. With `checksums`, PNG chunk CRCs are checked too (a pass over every byte:
    /// `verify` does it, the build's hot path does not). Pixel data is not decoded.
    /// - Returns: the format.
    /// - Throws: `ImageError` saying what is wrong.
    public static func validate(_ data: some ContiguousBytes, checksums: Bool = true) throws -> ImageFormat {
        try data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard let format = sniff(bytes) else { throw ImageError("not a PNG, JPEG or WebP image") }
            switch format {
            case .png: try validatePNG(bytes, checksums: checksums)
            case .jpeg: try validateJPEG(bytes)
            case .webp: try validateWebP(bytes)
            }
            return format
        }
    }

    private static func validatePNG(_ bytes: UnsafeBufferPointer<UInt8>, checksums: Bool) throws {
        var offset = 8
        var sawHeader = false
        while offset + 12 <= bytes.count {
            let length = Int(bigEndian32(bytes, offset))
            let typeStart = offset + 4
            guard length <= bytes.count - typeStart - 8 else { throw ImageError("PNG is truncated") }
            let type = String(decoding: bytes[typeStart..<typeStart + 4], as: UTF8.self)
            let stored = bigEndian32(bytes, typeStart + 4 + length)
            if checksums {
                let computed = UInt32(crc32(0, bytes.baseAddress! + typeStart, UInt32(4 + length)))
                guard stored == computed else { throw ImageError("PNG chunk \(type) is damaged (CRC mismatch)") }
            }
            if !sawHeader {
                guard type == "IHDR" else { throw ImageError("PNG does not start with IHDR") }
                sawHeader = true
            }
            if type == "IEND" { return }
            offset = typeStart + 8 + length
        }
        throw ImageError("PNG is truncated (no IEND)")
    }

    private static func validateJPEG(_ bytes: UnsafeBufferPointer<UInt8>) throws {
        // Trailing padding after EOI is common; require an EOI marker within the last bytes.
        guard bytes.count > 4, bytes.suffix(64).windows(ofCount: 2).contains([0xff, 0xd9]) else {
            throw ImageError("JPEG is truncated (no end-of-image marker)")
        }
    }

    private static func validateWebP(_ bytes: UnsafeBufferPointer<UInt8>) throws {
        let declared = Int(UInt32(bytes[4]) | UInt32(bytes[5]) << 8 | UInt32(bytes[6]) << 16 | UInt32(bytes[7]) << 24)
        guard declared + 8 <= bytes.count else { throw ImageError("WebP is truncated") }
    }

    private static func bigEndian32(_ bytes: UnsafeBufferPointer<UInt8>, _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }
}

/// Why bytes are not an acceptable image.
public struct ImageError: Error, CustomStringConvertible, Equatable {
    public let description: String
    init(_ description: String) { self.description = description }
    /// The header lies past the end of the file.
    public static let truncated = ImageError("the image is truncated before its header ends")
}

extension Collection where Element == UInt8 {
    fileprivate func windows(ofCount count: Int) -> [[UInt8]] {
        let array = Array(self)
        guard array.count >= count else { return [] }
        return (0...(array.count - count)).map { Array(array[$0..<$0 + count]) }
    }
}
