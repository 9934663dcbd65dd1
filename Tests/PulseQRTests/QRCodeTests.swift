import Foundation
import PulseHTML
import PulseQR
import Testing

@Suite struct QRCodeTests {
    /// Encodes, draws the SVG, reads the drawing back and lets zbarimg decode it.
    func roundTrip(_ text: String, _ level: QRCode.ErrorCorrection = .medium) throws -> (QRCode, String) {
        let code = try QRCode(text, errorCorrection: level)
        let raster = try QRRaster(svg: code.svg(moduleSize: 4, label: "code").renderedString)
        return (code, try ZBar.decode(raster.pgm(scale: 4)))
    }

    @Test func enrollmentLinkWithFragmentAndAmpersandRoundTrips() throws {
        let link = "https://pulse.example.org:8443/enroll?series=devconf-2026&kind=code#code=K7Q2-9XPM&server=https%3A%2F%2Fsync.example.org"
        let (_, read) = try roundTrip(link)
        #expect(read == link)
    }

    @Test func threeHundredCharacterURLRoundTrips() throws {
        let base = "https://sync.pulse.example.org/api/sync/enroll?token="
        let link = base + String(repeating: "aZ09-_~.", count: 40).prefix(300 - base.count)
        #expect(link.utf8.count == 300)
        let (code, read) = try roundTrip(link)
        #expect(read == link)
        #expect(code.version > 10)  // 300 bytes in 8-bit mode at M need version 11 or more
    }

    @Test(arguments: QRCode.ErrorCorrection.allCases)
    func everyLevelRoundTrips(level: QRCode.ErrorCorrection) throws {
        let (_, read) = try roundTrip("https://pulse.example/e#c=AB12", level)
        #expect(read == "https://pulse.example/e#c=AB12")
    }

    @Test func utf8IsEncodedAsItsBytes() throws {
        let text = "https://pulse.example/événement/会議?name=Zoë 🙂"
        let (_, read) = try roundTrip(text)
        #expect(read == text)
    }

    @Test func capacityIsExactlyVersion40AndOneMoreByteIsATypedError() throws {
        for level in QRCode.ErrorCorrection.allCases {
            let most = try QRCode(bytes: Array(repeating: UInt8(ascii: "a"), count: level.maximumBytes), errorCorrection: level)
            #expect(most.version == 40 && most.size == 177)
            #expect(throws: QRError.tooLong(bytes: level.maximumBytes + 1, maximum: level.maximumBytes)) {
                try QRCode(bytes: Array(repeating: 0x61, count: level.maximumBytes + 1), errorCorrection: level)
            }
        }
        let huge = String(repeating: "x", count: 100_000)
        let error = #expect(throws: QRError.self) { try QRCode(huge) }
        #expect(error?.description == "QR code: 100000 bytes is too long (at most 2331 at this error correction level)")
        #expect(throws: QRError.empty) { try QRCode("") }
    }

    @Test func matrixHasFinderPatternsAndQuietZoneOutside() throws {
        let code = try QRCode("HELLO", errorCorrection: .low)
        #expect(code.version == 1 && code.size == 21)
        // A finder pattern: a 7×7 dark ring, a light ring, a 3×3 dark centre, in three corners.
        for (cx, cy) in [(0, 0), (14, 0), (0, 14)] {
            for y in 0..<7 {
                for x in 0..<7 {
                    let ring = max(abs(x - 3), abs(y - 3))
                    #expect(code.isDark(cx + x, cy + y) == (ring != 2), "finder at \(cx),\(cy): module \(x),\(y)")
                }
            }
        }
        #expect(!code.isDark(-1, 0) && !code.isDark(0, 21) && !code.isDark(Int.min, Int.max))
        // The same text gives the same matrix; bytes with a NUL encode too.
        #expect(try QRCode("HELLO", errorCorrection: .low) == code)
        #expect(try QRCode(bytes: [0x41, 0x00, 0x42]).size == 21)
    }

    @Test func svgDrawsExactlyTheDarkModules() throws {
        let code = try QRCode("https://pulse.example/enroll#code=ABCD-EFGH", errorCorrection: .medium)
        let svg = code.svg(moduleSize: 5, quietZone: 4, label: "Enrollment link").renderedString
        let raster = try QRRaster(svg: svg)
        #expect(raster.side == code.size + 8)
        for y in 0..<raster.side {
            for x in 0..<raster.side { #expect(raster.isDark(x, y) == code.isDark(x - 4, y - 4)) }
        }
        #expect(svg.components(separatedBy: "<path").count == 2)  // one path
        let side = code.size + 8
        #expect(svg.hasPrefix(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"Enrollment link\" viewBox=\"0 0 \(side) \(side)\" "
                + "width=\"\(side * 5)\" height=\"\(side * 5)\" shape-rendering=\"crispEdges\"><title>Enrollment link</title>"
                + "<rect width=\"\(side)\" height=\"\(side)\" fill=\"#fff\"/><path fill=\"#000\" d=\"M4 4h7v1h-7z"))
        #expect(svg.hasSuffix("z\"/></svg>"))
        #expect(svg.utf8.count < 5_000)
    }

    @Test func svgLabelIsEscapedAndNoQuietZoneWorks() throws {
        let code = try QRCode("x")
        let svg = code.svg(moduleSize: 1, quietZone: 0, label: "\"><script>alert(1)</script>&").renderedString
        #expect(svg.contains("aria-label=\"&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;\""))
        #expect(svg.contains("<title>&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;</title>"))
        #expect(!svg.contains("<script"))
        #expect(svg.contains("d=\"M0 0h7v1h-7z"))
    }
}
