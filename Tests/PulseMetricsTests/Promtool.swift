import Foundation

/// `promtool check metrics` (Debian prometheus, installed by Scripts/bootstrap) on an exposition:
/// its exit status and everything it printed (problems and lint findings).
enum Promtool {
    static func check(_ exposition: [UInt8]) throws -> (status: Int32, output: String) {
        let path = "/usr/bin/promtool"
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw PromtoolMissing()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["check", "metrics"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        input.fileHandleForWriting.write(Data(exposition))
        try input.fileHandleForWriting.close()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: printed, as: UTF8.self))
    }

    struct PromtoolMissing: Error, CustomStringConvertible {
        var description: String { "promtool is missing: run Scripts/bootstrap (Debian prometheus)" }
    }
}
