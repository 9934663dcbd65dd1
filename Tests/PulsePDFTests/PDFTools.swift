import Foundation
import PulseCrypto
import Testing

/// Paths, and the qpdf and poppler command-line tools (Scripts/bootstrap installs both) the page tests
/// look at written pages with (in a `TestFolder` of the test's).
enum PDFTools {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardizedFileURL
    static let fixtures = repository.appendingPathComponent("Tests/Fixtures/pdf")

    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: fixtures.appendingPathComponent(name)))
    }

    /// Runs a tool and returns what it wrote to standard output; fails the test if it exits non-zero.
    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/\(tool)")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        // qpdf exits 3 for warnings only: the output is complete.
        try #require(process.terminationStatus == 0 || (tool == "qpdf" && process.terminationStatus == 3),
            "\(tool) \(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
        return data
    }

    static func write(_ pdf: [UInt8], _ name: String, in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent(name)
        try Data(pdf).write(to: url)
        return url
    }

    /// `qpdf ARGUMENTS…` run on `pdf`, where `IN` stands for its path and `OUT` for the output's.
    static func qpdf(_ pdf: [UInt8], _ arguments: [String], in folder: URL) throws -> [UInt8] {
        let input = try write(pdf, "qpdf-in-\(UUID().uuidString.prefix(6)).pdf", in: folder)
        let output = folder.appendingPathComponent("qpdf-out-\(UUID().uuidString.prefix(6)).pdf")
        try run("qpdf", arguments.map { $0 == "IN" ? input.path : $0 == "OUT" ? output.path : $0 })
        return Array(try Data(contentsOf: output))
    }

    /// `qpdf --split-pages --remove-unreferenced-resources=yes`: qpdf's own pruned split, page by page.
    static func prunedSplit(_ pdf: [UInt8], in folder: URL) throws -> [[UInt8]] {
        let split = folder.appendingPathComponent("split-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: split, withIntermediateDirectories: true)
        let input = try write(pdf, "deck.pdf", in: split)
        try run("qpdf", ["--split-pages", "--remove-unreferenced-resources=yes", input.path, split.appendingPathComponent("page-%d.pdf").path])
        let names = try FileManager.default.contentsOfDirectory(atPath: split.path).filter { $0.hasPrefix("page-") }
        return try names.sorted { Int($0.dropFirst(5).dropLast(4))! < Int($1.dropFirst(5).dropLast(4))! }
            .map { Array(try Data(contentsOf: split.appendingPathComponent($0))) }
    }

    /// The file with every stream decoded (`qpdf --qdf`): text drawn or carried anywhere is greppable.
    static func expanded(_ pdf: [UInt8], in folder: URL) throws -> [UInt8] {
        try qpdf(pdf, ["--qdf", "--object-streams=disable", "--decode-level=generalized", "IN", "OUT"], in: folder)
    }

    /// Page `page` (from 1) of `pdf` rendered by poppler at 30 dpi, as PNG bytes.
    static func render(_ pdf: [UInt8], page: Int = 1, in folder: URL) throws -> Data {
        let input = try write(pdf, "render-\(UUID().uuidString.prefix(6)).pdf", in: folder)
        let prefix = folder.appendingPathComponent("render-\(UUID().uuidString.prefix(6))").path
        try run("pdftoppm", ["-r", "30", "-png", "-f", "\(page)", "-l", "\(page)", "-singlefile", input.path, prefix])
        return try Data(contentsOf: URL(fileURLWithPath: prefix + ".png"))
    }

    static func contains(_ haystack: [UInt8], _ text: String) -> Bool { haystack.firstRange(of: Array(text.utf8)) != nil }
}

/// The images and fonts a PDF file holds (every object, reachable or not), from `qpdf --json`.
struct Inventory: Equatable {
    /// Each image XObject's decoded data, base64.
    var images: Set<String> = []
    /// Each font dictionary's `/BaseFont` (a Type 3 font's `/Name`), with the digest of its embedded
    /// program when it has one.
    var fonts: Set<String> = []

    init(_ pdf: [UInt8], in folder: URL) throws {
        let input = try PDFTools.write(pdf, "inventory-\(UUID().uuidString.prefix(6)).pdf", in: folder)
        let json = try PDFTools.run("qpdf", ["--json", "--json-key=qpdf", "--json-stream-data=inline", "--decode-level=generalized", input.path])
        let root = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        let objects = try #require((root["qpdf"] as? [Any])?.last as? [String: Any])
        func dictionary(_ reference: Any?) -> [String: Any]? {
            if let dictionary = reference as? [String: Any] { return dictionary }
            guard let text = reference as? String, text.hasSuffix(" R"), let entry = objects["obj:" + text] as? [String: Any] else { return nil }
            return (entry["value"] as? [String: Any]) ?? ((entry["stream"] as? [String: Any])?["dict"] as? [String: Any])
        }
        func data(_ reference: Any?) -> String? {
            guard let text = reference as? String, let entry = objects["obj:" + text] as? [String: Any] else { return nil }
            return (entry["stream"] as? [String: Any])?["data"] as? String
        }
        for (_, entry) in objects {
            guard let entry = entry as? [String: Any] else { continue }
            if let stream = entry["stream"] as? [String: Any], let dict = stream["dict"] as? [String: Any],
                dict["/Subtype"] as? String == "/Image", let bytes = stream["data"] as? String
            {
                images.insert(bytes)
            }
            if let value = entry["value"] as? [String: Any], value["/Type"] as? String == "/Font" {
                let name = ((value["/BaseFont"] ?? value["/Name"]) as? String ?? "unnamed").replacingOccurrences(of: "/", with: "")
                let descriptor = dictionary(value["/FontDescriptor"])
                let program = ["/FontFile", "/FontFile2", "/FontFile3"].lazy.compactMap { data(descriptor?[$0]) }.first
                fonts.insert(program.map { "\(name) \(SHA256.hex(Data($0.utf8)).prefix(12))" } ?? name)
            }
        }
    }
}
