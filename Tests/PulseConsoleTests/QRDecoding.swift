import Foundation

/// The QR code of a console page read back as a phone's camera would: the `<svg>`'s module path drawn into
/// a PGM (the path language PulseQR writes: `M`/`m` moves, each run `h n v1 h-n z`), then `zbarimg`
/// (Debian zbar-tools) decodes it. (PulseQRTests' `QRRaster` does the same for the wrapper's own tests.)
enum QRDecoding {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The text of the first QR code in `html`.
    static func decode(html: String) throws -> String {
        guard let start = html.range(of: "<svg xmlns"), let end = html[start.lowerBound...].range(of: "</svg>") else {
            throw Failure(description: "no <svg> on the page")
        }
        let svg = String(html[start.lowerBound..<end.upperBound])
        guard let box = attribute("viewBox", svg)?.split(separator: " ").compactMap({ Int($0) }), box.count == 4, box[2] > 0, box[2] <= 200,
              let d = attribute("d", svg)
        else { throw Failure(description: "no viewBox or path") }
        let side = box[2]
        var dark = Array(repeating: false, count: side * side)
        let scanner = Scanner(string: d)
        scanner.charactersToBeSkipped = nil
        var x = 0, y = 0
        while !scanner.isAtEnd {
            guard let command = scanner.scanCharacter(), command == "M" || command == "m", let dx = scanner.scanInt(), scanner.scanString(" ") != nil,
                  let dy = scanner.scanInt(), scanner.scanString("h") != nil, let length = scanner.scanInt(), length > 0,
                  scanner.scanString("v1h-\(length)z") != nil
            else { throw Failure(description: "unexpected path at \(scanner.currentIndex)") }
            (x, y) = command == "M" ? (dx, dy) : (x + dx, y + dy)
            for column in x..<(x + length) where (0..<side).contains(column) && (0..<side).contains(y) { dark[y * side + column] = true }
        }
        let scale = 4, pixels = side * scale
        var image = Data("P5\n\(pixels) \(pixels)\n255\n".utf8)
        for row in 0..<pixels {
            for column in 0..<pixels { image.append(dark[(row / scale) * side + column / scale] ? 0 : 255) }
        }
        return try zbar(image)
    }

    private static func attribute(_ name: String, _ svg: String) -> String? {
        guard let range = svg.range(of: " \(name)=\""), let end = svg[range.upperBound...].firstIndex(of: "\"") else { return nil }
        return String(svg[range.upperBound..<end])
    }

    private static func zbar(_ image: Data) throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pulse-console-qr-\(UUID().uuidString).pgm")
        try image.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/zbarimg") else { throw Failure(description: "zbarimg is missing (Debian zbar-tools)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/zbarimg")
        process.arguments = ["--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", "-Sqrcode.binary", file.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let bytes = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, bytes.last == 0x0A else { throw Failure(description: "zbarimg read no code (\(process.terminationStatus))") }
        return String(decoding: bytes.dropLast(), as: UTF8.self)
    }
}
