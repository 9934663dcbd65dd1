import Foundation
import PulseTestSupport
import Testing

/// The file helpers these tests share, on the one temporary folder of the tests (PulseTestSupport's `TestFolder`).
extension TestFolder {
    func write(_ name: String, _ text: String) throws { try Data(text.utf8).write(to: URL(fileURLWithPath: path(name))) }

    func read(_ name: String) -> String? { FileManager.default.contents(atPath: path(name)).map { String(decoding: $0, as: UTF8.self) } }

    /// The names in the folder, sorted.
    func names() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted() }

    func permissions(_ name: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path(name))[.posixPermissions] as? Int)
    }
}

/// Programs the tests run, and who runs them.
enum Shell {
    static let isRoot = getuid() == 0

    /// Runs a program and waits; its exit status.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// A small tmpfs mounted on a fresh folder (needs root, as CI has): a disk that really fills up, a file
/// system that really is read-only.
struct Mount {
    let folder: TestFolder

    init(size: String, _ name: String = #function) throws {
        folder = try TestFolder(name)
        try #require(try Shell.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", folder.url.path]) == 0, "mount tmpfs")
    }

    func remountReadOnly() throws {
        try #require(try Shell.run("/bin/mount", ["-o", "remount,ro", folder.url.path]) == 0)
    }

    /// Unmounts it; the folder goes with the `TestFolder`.
    func done() {
        _ = try? Shell.run("/bin/umount", ["-l", folder.url.path])
    }
}
