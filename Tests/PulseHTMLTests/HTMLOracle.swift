import Foundation
import PulseHTML

/// Python's html.parser on rendered bytes (Tests/Fixtures/html/events.py): the events a tokenizer sees.
enum HTMLOracle {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/html/events.py")

    /// One event per start tag, end tag and run of text; attributes as [name, value] pairs.
    static func events(_ node: Node) throws -> [[String]] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(node.render()))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let events = try JSONSerialization.jsonObject(with: data) as? [[Any]] else {
            throw OracleError(status: process.terminationStatus)
        }
        // Flattened to strings: ["start", "p", "title", "value", …], ["text", "…"], ["end", "p"].
        return events.map { event in
            event.flatMap { part -> [String] in
                if let text = part as? String { return [text] }
                return (part as? [[Any]] ?? []).flatMap { pair in pair.map { $0 as? String ?? "<null>" } }
            }
        }
    }

    struct OracleError: Error { let status: Int32 }
}
