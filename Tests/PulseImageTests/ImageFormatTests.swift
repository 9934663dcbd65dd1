import Foundation
import PulseImage
import Testing

/// Formats told by their bytes, headers read without decoding, containers walked to their end: on the
/// bundled sample images (128×128 each, Samples/README.md) and on copies of them damaged one way each.
struct ImageFormatTests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Samples/images").standardizedFileURL

    static func sample(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: samples.appendingPathComponent(name))) }

    static func refusal(_ bytes: [UInt8], checksums: Bool = true) -> String? {
        do { _ = try ImageFormat.validate(bytes, checksums: checksums); return nil } catch { return "\(error)" }
    }

    @Test func headersGiveTheSizeOfEveryFormat() throws {
        for (name, format) in [("ada.png", ImageFormat.png), ("grace.jpg", .jpeg), ("margaret.webp", .webp)] {
            #expect(try ImageHeader.read(Self.sample(name)) == ImageHeader(format: format, width: 128, height: 128), "\(name)")
            #expect(try ImageFormat.validate(Self.sample(name)) == format, "\(name)")
            #expect(ImageFormat.sniff(try Self.sample(name)) == format)
        }
        #expect(throws: ImageError.self) { try ImageHeader.read(Array("GIF89a......".utf8)) }
        #expect(Self.refusal(Array("GIF89a......".utf8)) == "not a PNG, JPEG or WebP image")
        #expect(ImageLimits.format(forExtension: "a.JPEG") == .jpeg)
        #expect(ImageLimits.format(forExtension: "slide.gif") == nil)
    }

    @Test func aCutImageIsRefusedWhateverItsFormat() throws {
        let png = try Self.sample("ada.png")
        #expect(Self.refusal(Array(png.dropLast(12))) == "PNG is truncated (no IEND)")
        #expect(Self.refusal(Array(png.prefix(60))) == "PNG is truncated")  // IDAT says 615 bytes
        #expect(Self.refusal(Array(try Self.sample("grace.jpg").dropLast(2))) == "JPEG is truncated (no end-of-image marker)")
        #expect(Self.refusal(Array(try Self.sample("margaret.webp").dropLast(1))) == "WebP is truncated")
    }

    @Test func aDamagedPNGChunkIsCaughtOnlyWhenChecksumsAreAsked() throws {
        var png = try Self.sample("ada.png")
        png[100] ^= 0xff  // inside IDAT (bytes 41…655 of ada.png)
        #expect(Self.refusal(png)?.hasSuffix("is damaged (CRC mismatch)") == true, "\(Self.refusal(png) ?? "accepted")")
        #expect(Self.refusal(png, checksums: false) == nil)
    }
}
