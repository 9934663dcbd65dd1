import Foundation
import PulseSystem
import PulseTestSupport
import Testing

/// Issue 20 on the real executable: `serve` raises the soft open-files limit to the hard one, says on its
/// start line how many connections that allows, and refuses a `--max-connections` beyond it with one line.
@Suite(.serialized) struct DescriptorLimitServeTests {
    /// `pulse-server serve` under `ulimit` settings made by a shell that then execs it.
    static func serve(ulimit: String, data: String, _ arguments: [String]) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        let command = ([ServerProcess.binary.path, "serve", "--data", data, "--listen", "127.0.0.1:0", "--access-log", "off"] + arguments)
            .map { "'\($0)'" }.joined(separator: " ")
        process.arguments = ["-c", "ulimit \(ulimit) && exec \(command)"]
        process.environment = ProcessInfo.processInfo.environment.filter { $0.key != "PULSE_DATABASE_URL" }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return (process, errors)
    }

    @Test func aMaximumBeyondTheHardLimitIsOneClearStartError() throws {
        let folder = try TestFolder()
        let data = folder.url.appendingPathComponent("data").path
        let (process, errors) = try Self.serve(ulimit: "-n 300", data: data, ["--threads", "2", "--max-connections", "1000"])
        process.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let lines = text.split(separator: "\n")
        #expect(process.terminationStatus == 1)
        #expect(lines.count == 1, "\(lines)")
        for part in ["error: --max-connections 1000 needs an open-files limit of", "but it is 300", "ulimit -n", "LimitNOFILE=", "or lower --max-connections"] {
            #expect(text.contains(part), "\(part) missing from \(text)")
        }
        #expect(!text.contains("serving on"))
    }

    @Test func theSoftLimitIsRaisedAndTheStartLineSaysWhatItAllows() throws {
        let folder = try TestFolder()
        let data = folder.url.appendingPathComponent("data").path
        let (process, errors) = try Self.serve(ulimit: "-Sn 100 && ulimit -Hn 600", data: data, ["--threads", "2", "--max-connections", "300"])
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        let line = try #require(Self.firstLine(errors), "no start line")
        #expect(line.contains("serving on http://127.0.0.1:"), "\(line)")
        // 600 less the reserve (64, 3 × 10 SQLite connections) less 128 + 7 for the headroom, threads and listener.
        #expect(line.contains("300 connections at most (the open-files limit 600 allows 371)"), "\(line)")
        let limits = try String(contentsOfFile: "/proc/\(process.processIdentifier)/limits", encoding: .utf8)
        let open = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max open files") })
        #expect(open.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).prefix(2) == ["600", "600"], "\(open)")
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    /// Without --max-connections the default (20,000) is lowered to fit: the server still starts, and says so.
    @Test func theDefaultIsLoweredUnderASmallLimit() throws {
        let folder = try TestFolder()
        let data = folder.url.appendingPathComponent("data").path
        let (process, errors) = try Self.serve(ulimit: "-n 600", data: data, ["--threads", "2"])
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        let line = try #require(Self.firstLine(errors), "no start line")
        #expect(line.contains("371 connections at most (the default 20000 lowered to what the open-files limit 600 allows)"), "\(line)")
    }

    /// The first line of standard error (the start line or the error), read up to its newline.
    static func firstLine(_ pipe: Pipe) -> String? {
        var bytes = [UInt8]()
        let handle = pipe.fileHandleForReading
        while true {
            let chunk = handle.readData(ofLength: 1)
            guard let byte = chunk.first else { break }
            if byte == UInt8(ascii: "\n") { break }
            bytes.append(byte)
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }
}
