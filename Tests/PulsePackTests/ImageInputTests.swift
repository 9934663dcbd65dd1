import Foundation
import PulseCore
import PulseTestSupport
import Testing

@testable import PulsePack

/// Images a newcomer gets wrong (issue 11, items 4 and 6): a name that lies about the format, absurd
/// pixel sizes, huge files, and the order and junk of a slide folder.
struct ImageInputTests {
    /// A PNG with the given IHDR size and one tiny IDAT, CRCs right: valid as a container, whatever it declares.
    static func png(width: UInt32, height: UInt32) -> [UInt8] {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return be32(UInt32(data.count)) + body + be32(crc32(body))
        }
        let ihdr = be32(width) + be32(height) + [8, 2, 0, 0, 0]
        return [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] + chunk("IHDR", ihdr)
            + chunk("IDAT", [0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]) + chunk("IEND", [])
    }

    static func be32(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)] }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xffff_ffff
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xedb8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return ~crc
    }

    /// A session whose one speaker's photo is `photo` (a file written into the test folder).
    func build(photo name: String, _ bytes: [UInt8]?, extra: [String] = [], _ function: String = #function) throws -> (code: Int32, out: [String], err: [String], folder: URL) {
        let temporary = try TestFolder(function)
        let folder = temporary.url
        let photo = folder.appendingPathComponent(name)
        if let bytes { try Data(bytes).write(to: photo) }
        let session = try Support.sessionFile(in: folder, deck: Support.fixtures.appendingPathComponent("pdf/three-pages.pdf"),
                                              speakers: #"[{"id": "ada", "name": "Ada", "photo": "\#(photo.path)"}]"#)
        let result = Support.cli(["build", session.path, "--out", folder.appendingPathComponent("pkg").path] + extra)
        return (result.code, result.out, result.err, folder)
    }

    @Test func aNameThatLiesAboutTheFormatIsRefused() throws {
        let result = try build(photo: "ada.jpg", Self.png(width: 400, height: 400))
        #expect(result.code == 65)
        #expect(result.err.count == 1)
        #expect(result.err.first?.hasSuffix("speakers[0].photo: \(result.folder.path)/ada.jpg is a PNG image, but its name ends in .jpg (JPEG): rename it to .png") == true, "\(result.err)")
    }

    @Test func absurdDimensionsAreRefused() throws {
        let huge = try build(photo: "ada.png", Self.png(width: 60000, height: 60000))
        #expect(huge.code == 65)
        #expect(huge.err.first?.hasSuffix("ada.png is 60000×60000 pixels: too large (at most 16384 a side and 50 megapixels)") == true, "\(huge.err)")
        let empty = try build(photo: "ada.png", Self.png(width: 0, height: 10))
        #expect(empty.err.first?.hasSuffix("ada.png declares 0×10 pixels (damaged)") == true, "\(empty.err)")
        let truncated = try build(photo: "ada.png", Array(Self.png(width: 10, height: 10).prefix(20)))
        #expect(truncated.err.first?.hasSuffix("ada.png: PNG header is truncated") == true, "\(truncated.err)")
    }

    /// A 300 MB file is refused from its size alone: it is never read (the build stays small).
    @Test func aHugeFileIsRefusedWithoutReadingIt() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let photo = folder.appendingPathComponent("ada.png")
        #expect(FileManager.default.createFile(atPath: photo.path, contents: Data(Self.png(width: 10, height: 10))))
        let handle = try FileHandle(forWritingTo: photo)
        try handle.truncate(atOffset: 300_000_000)  // sparse: no disk, no memory
        try handle.close()
        let session = try Support.sessionFile(in: folder, deck: Support.fixtures.appendingPathComponent("pdf/three-pages.pdf"),
                                              speakers: #"[{"id": "ada", "name": "Ada", "photo": "\#(photo.path)"}]"#)
        let before = ProcessInfo.processInfo.physicalMemory > 0 ? residentBytes() : 0
        let result = Support.cli(["build", session.path, "--out", folder.appendingPathComponent("pkg").path])
        #expect(result.code == 65)
        #expect(result.err.first?.hasSuffix("ada.png is 300.0 MB, over the 64.0 MB an image may have") == true, "\(result.err)")
        #expect(residentBytes() - before < 100_000_000, "the file was not read into memory")
    }

    func residentBytes() -> Int {
        let fields = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8))?.split(separator: " ") ?? []
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(getpagesize()) : 0
    }

    @Test func largeImagesAreWarnedAboutAndCounted() throws {
        let photo = Self.png(width: 8000, height: 4500)
        let result = try build(photo: "ada.png", photo, extra: ["--max-image-size", "50B", "--json"])
        #expect(result.code == 0, "\(result.err)")
        #expect(result.err.count == 1)
        #expect(result.err.first?.contains("speakers[0].photo: \(result.folder.path)/ada.png is \(photo.count) B, over --max-image-size 50 B: every phone downloads it") == true, "\(result.err)")
        let report = try JSONValue.parse(Array(result.out.joined(separator: "\n").utf8))
        #expect(report["images"]?["bytes"] == .int(photo.count))
        #expect(report["images"]?["largest"]?["path"] == .string(result.folder.appendingPathComponent("ada.png").path))
        let quiet = try build(photo: "ada.png", photo)
        #expect(quiet.code == 0 && quiet.err.isEmpty, "no warning under the default 2 MB: \(quiet.err)")
        #expect(quiet.out.contains { $0.hasPrefix("  images: 1 (\(photo.count) B), 1 new / 0 reused; largest \(photo.count) B: ") }, "\(quiet.out)")
    }

    // MARK: - Slide folders

    /// A slide folder named as people name them, with the junk their systems leave.
    func slideFolder(_ names: [String], junk: [String] = [], in folder: URL) throws -> URL {
        let deck = folder.appendingPathComponent("slides")
        try FileManager.default.createDirectory(at: deck, withIntermediateDirectories: true)
        for (index, name) in names.enumerated() {
            let source = Support.keynoteImages.appendingPathComponent("slide\(index + 1).png")
            try FileManager.default.copyItem(at: source, to: deck.appendingPathComponent(name))
        }
        for name in junk { try Data("junk".utf8).write(to: deck.appendingPathComponent(name)) }
        return deck
    }

    @Test func slidesAreInNaturalOrderAndJunkIsIgnored() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let deck = try slideFolder(["Slide10.png", "slide1.png", "slide2.png", "SLIDE3.png", "slide03b.png"],
                                   junk: [".DS_Store", "Thumbs.db", "desktop.ini", "._slide1.png", "slide2.png~"], in: folder)
        let session = try Support.sessionFile(in: folder, deck: deck)
        let result = Support.cli(["build", session.path, "--out", folder.appendingPathComponent("pkg").path, "--json"])
        #expect(result.code == 0, "\(result.err)")
        let report = try JSONValue.parse(Array(result.out.joined(separator: "\n").utf8))
        let first = report["sessions"]?.arrayValue?.first
        #expect(first?["slideFiles"] == ["slide1.png", "slide2.png", "SLIDE3.png", "slide03b.png", "Slide10.png"])
        #expect(first?["ignoredFiles"] == ["._slide1.png", ".DS_Store", "desktop.ini", "slide2.png~", "Thumbs.db"])
        // The manifest's slide n follows that order: slide n is the n-th file's content.
        let manifest = try Support.manifest(folder.appendingPathComponent("pkg"))
        #expect(manifest["slides"]?.arrayValue?.count == 5)
        let human = Support.cli(["build", session.path, "--out", folder.appendingPathComponent("pkg2").path])
        #expect(human.out.contains("  session talk: slides in natural order of their names: slide1.png, slide2.png, SLIDE3.png, slide03b.png, Slide10.png; "
            + "ignored: ._slide1.png, .DS_Store, desktop.ini, slide2.png~, Thumbs.db"), "\(human.out)")
    }

    @Test func anythingElseInASlideFolderIsNamed() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let deck = try slideFolder(["slide1.png", "slide2.png"], junk: ["notes.txt"], in: folder)
        let session = try Support.sessionFile(in: folder, deck: deck)
        let result = Support.cli(["build", session.path, "--out", folder.appendingPathComponent("pkg").path])
        #expect(result.code == 65)
        #expect(result.err == ["pulse-pack: error: \(deck.path)/notes.txt: not a PNG, JPEG or WebP image (only images belong in a slide folder)"])
        try FileManager.default.removeItem(at: deck.appendingPathComponent("notes.txt"))
        try FileManager.default.moveItem(at: deck.appendingPathComponent("slide2.png"), to: deck.appendingPathComponent("slide2.jpg"))
        let renamed = Support.cli(["build", session.path, "--out", folder.appendingPathComponent("pkg").path])
        #expect(renamed.err == ["pulse-pack: error: \(deck.path)/slide2.jpg: is a PNG image, but its name ends in .jpg (JPEG): rename it to .png"])
        try Data(Self.png(width: 20000, height: 100)).write(to: deck.appendingPathComponent("slide2.png"))
        try FileManager.default.removeItem(at: deck.appendingPathComponent("slide2.jpg"))
        let wide = Support.cli(["build", session.path, "--out", folder.appendingPathComponent("pkg").path])
        #expect(wide.err == ["pulse-pack: error: \(deck.path)/slide2.png: is 20000×100 pixels: too large (at most 16384 a side and 50 megapixels)"])
    }

    @Test func naturalOrderIgnoresCase() {
        #expect(["Slide10.png", "slide1.png", "slide2.png"].sorted(by: naturalOrder) == ["slide1.png", "slide2.png", "Slide10.png"])
        #expect(["b", "A", "a", "B"].sorted(by: naturalOrder) == ["A", "a", "B", "b"])
        #expect(["x10", "x9", "x010", "x1"].sorted(by: naturalOrder) == ["x1", "x9", "x010", "x10"])
    }
}

extension ImageInputTests {
    /// The sort used for folders (names folded once) is the same order as the comparison.
    @Test func naturallySortedMatchesNaturalOrder() {
        let names = ["b2", "B10", "a", "A", "ä1", "Ä2", "x010", "x10", "x9", "slide02b", "Slide2", "slide2", "10", "9", "", "z~"]
        #expect(names.naturallySorted() == names.sorted(by: naturalOrder))
        #expect(names.naturallySorted().first == "")
        #expect(Array(names.naturallySorted().prefix(3)) == ["", "9", "10"])
    }
}
