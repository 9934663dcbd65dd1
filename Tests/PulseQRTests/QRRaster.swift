import Foundation
import PulseQR
import PulseTestSupport

/// Draws what a QR code's SVG draws, without an SVG renderer: reads the `<path>`'s runs back into a
/// module matrix (the path language PulseQR writes: `M x y`, `m dx dy`, `h n`, `v1`, `h-n`, `z`), then
/// writes it as a PGM image that `zbarimg` reads.
struct QRRaster {
    let side: Int
    private(set) var dark: [Bool]

    /// The matrix the SVG `svg` draws; `side` is its viewBox's width in modules.
    init(svg: String) throws {
        let viewBox = try Self.attribute("viewBox", in: svg).split(separator: " ").compactMap { Int($0) }
        guard viewBox.count == 4, viewBox[2] == viewBox[3] else { throw RasterError("viewBox \(viewBox)") }
        side = viewBox[2]
        dark = Array(repeating: false, count: side * side)
        let d = try Self.attribute("d", in: svg)
        var start = (x: 0, y: 0)
        let scanner = Scanner(string: d)
        scanner.charactersToBeSkipped = nil
        while !scanner.isAtEnd {
            guard let command = scanner.scanCharacter() else { break }
            switch command {
            case "M", "m":
                guard let x = scanner.scanInt(), scanner.scanString(" ") != nil, let y = scanner.scanInt() else { throw RasterError("move at \(scanner.currentIndex)") }
                start = command == "M" ? (x, y) : (start.x + x, start.y + y)
                // Every run is exactly h n v1 h-n z: a 1-module-high rectangle from the start point.
                guard scanner.scanString("h") != nil, let length = scanner.scanInt(), length > 0,
                    scanner.scanString("v1h-\(length)z") != nil
                else { throw RasterError("run at \(scanner.currentIndex)") }
                for x in start.x..<start.x + length {
                    guard (0..<side).contains(x), (0..<side).contains(start.y) else { throw RasterError("run outside the viewBox") }
                    guard !dark[start.y * side + x] else { throw RasterError("module drawn twice") }
                    dark[start.y * side + x] = true
                }
            default:
                throw RasterError("unexpected \(command) in the path")
            }
        }
    }

    func isDark(_ x: Int, _ y: Int) -> Bool { dark[y * side + x] }

    /// A binary PGM (P5), `scale` pixels per module: dark 0, light 255.
    func pgm(scale: Int) -> Data {
        let pixels = side * scale
        var data = Data("P5\n\(pixels) \(pixels)\n255\n".utf8)
        for y in 0..<pixels {
            for x in 0..<pixels { data.append(isDark(x / scale, y / scale) ? 0 : 255) }
        }
        return data
    }

    private static func attribute(_ name: String, in svg: String) throws -> String {
        guard let range = svg.range(of: " \(name)=\""), let end = svg[range.upperBound...].firstIndex(of: "\"") else {
            throw RasterError("no \(name) attribute")
        }
        return String(svg[range.upperBound..<end])
    }
}

struct RasterError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// `zbarimg` (Debian zbar-tools, installed by Scripts/bootstrap) on one image: what it read.
enum ZBar {
    /// `name` gives the image's format by its extension (`code.pgm`, `code.png`).
    static func decode(_ image: Data, name: String = "code.pgm") throws -> String {
        let temporary = try TestFolder()
        let folder = temporary.url
        let file = folder.appendingPathComponent(name)
        try image.write(to: file)
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/zbarimg") else {
            throw RasterError("zbarimg is missing: run Scripts/bootstrap (Debian zbar-tools)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/zbarimg")
        // -Sbinary: the bytes as encoded, with no guess at a character set.
        process.arguments = ["--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", "-Sqrcode.binary", file.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let bytes = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw RasterError("zbarimg exited \(process.terminationStatus): no code read") }
        // --raw ends each symbol's data with one line feed.
        guard bytes.last == 0x0A else { throw RasterError("zbarimg: no line feed after the data") }
        return String(decoding: bytes.dropLast(), as: UTF8.self)
    }
}
