import Foundation
import Testing

/// A fresh folder for one test, and the helpers the file tests share.
struct Scratch {
    let path: String

    init(_ name: String = #function) throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("pulse-system-tests")
        let url = base.appendingPathComponent("\(name.filter { $0.isLetter || $0.isNumber })-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        path = url.path
    }

    func file(_ name: String) -> String { path + "/" + name }

    func write(_ name: String, _ text: String) throws { try Data(text.utf8).write(to: URL(fileURLWithPath: file(name))) }

    func read(_ name: String) -> String? { FileManager.default.contents(atPath: file(name)).map { String(decoding: $0, as: UTF8.self) } }

    /// The names in the folder, sorted.
    func names() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }

    func permissions(_ name: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: file(name))[.posixPermissions] as? Int)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

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
    let scratch: Scratch

    init(size: String, _ name: String = #function) throws {
        scratch = try Scratch(name)
        try #require(try Scratch.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", scratch.path]) == 0, "mount tmpfs")
    }

    func remountReadOnly() throws {
        try #require(try Scratch.run("/bin/mount", ["-o", "remount,ro", scratch.path]) == 0)
    }

    func done() {
        _ = try? Scratch.run("/bin/umount", ["-l", scratch.path])
        scratch.remove()
    }
}
