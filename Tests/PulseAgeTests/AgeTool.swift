import Foundation
import Testing

/// Runs the reference `age` tools. Missing tools fail the test (never skip): run Scripts/bootstrap.
enum AgeTool {
    static let age = "/usr/bin/age"
    static let ageKeygen = "/usr/bin/age-keygen"

    struct Result {
        var status: Int32
        var stdout: [UInt8]
        var stderr: String
    }

    static func requireInstalled(sourceLocation: SourceLocation = #_sourceLocation) throws {
        for tool in [age, ageKeygen] {
            try #require(
                FileManager.default.isExecutableFile(atPath: tool),
                "\(tool) is missing: run Scripts/bootstrap (it installs the Debian package age)",
                sourceLocation: sourceLocation)
        }
    }

    /// Runs `tool` with `arguments`, feeding `stdin`; waits for it to exit.
    static func run(_ tool: String, _ arguments: [String], stdin: [UInt8] = []) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let input = Pipe(), output = Pipe(), error = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // Read both pipes while writing, so a large output cannot block the child.
        let group = DispatchGroup()
        nonisolated(unsafe) var out = Data(), err = Data()
        group.enter()
        DispatchQueue.global().async { out = output.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        group.enter()
        DispatchQueue.global().async { err = error.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        try input.fileHandleForWriting.write(contentsOf: stdin)
        try input.fileHandleForWriting.close()
        group.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: Array(out), stderr: String(decoding: err, as: UTF8.self))
    }
}

func permissions(_ path: String) throws -> Int {
    try (FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
}
