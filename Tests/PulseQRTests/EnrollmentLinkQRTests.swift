import Foundation
import PulseCore
import PulseHTML
import PulseQR
import Testing

/// The console's QR code of an enrollment link (docs/console.md) reads back as that link, and the link it
/// reads parses to the same server and credential.
@Suite struct EnrollmentLinkQRTests {
    static let links: [EnrollmentLink] = [
        try! EnrollmentLink(server: "https://sync.example.net", credential: .deviceCode("K7Q2-9XPM-ABCD")),
        try! EnrollmentLink(server: "http://127.0.0.1:8080/pulse", credential: .registrationToken("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN-_0")),
    ]

    @Test(arguments: links)
    func theSVGOfALinkDecodesToTheLink(link: EnrollmentLink) throws {
        let svg = try QRCode(link.text, errorCorrection: .medium).svg(moduleSize: 6, label: "Enrollment link").renderedString
        let read = try ZBar.decode(try QRRaster(svg: svg).pgm(scale: 4))
        #expect(read == link.text)
        #expect(try EnrollmentLink(parsing: read) == link)
    }

    /// With a real SVG renderer too (Debian librsvg2-bin, installed by Scripts/bootstrap; missing, the test
    /// fails rather than passing without a check): what a browser draws.
    @Test(arguments: links)
    func rsvgConvertRenderingDecodesToTheLink(link: EnrollmentLink) throws {
        let renderer = "/usr/bin/rsvg-convert"
        try #require(FileManager.default.isExecutableFile(atPath: renderer), "\(renderer) is missing: run Scripts/bootstrap (Debian librsvg2-bin)")
        let svg = try QRCode(link.text, errorCorrection: .medium).svg(moduleSize: 6, label: "Enrollment link").renderedString
        let process = Process()
        process.executableURL = URL(fileURLWithPath: renderer)
        process.arguments = ["--format", "png"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(svg.utf8))
        try input.fileHandleForWriting.close()
        let png = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(try ZBar.decode(png, name: "code.png") == link.text)
    }
}
