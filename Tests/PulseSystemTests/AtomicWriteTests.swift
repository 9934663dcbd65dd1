import Foundation
import PulseSystem
import PulseTestSupport
import Testing

/// `FileSystem.replace` and `createNew`: all or nothing, the previous file whole on any failure, no temp file left.
@Suite(.serialized) struct AtomicWriteTests {
    @Test func replaceWritesWithTheExactModeAndLeavesNoTempFile() throws {
        let scratch = try TestFolder()
        try FileSystem.replace(scratch.path("index.json"), with: Array("one".utf8), mode: 0o640)
        try FileSystem.replace(scratch.path("index.json"), with: Data("two".utf8), mode: 0o444)
        #expect(scratch.read("index.json") == "two")
        #expect(try scratch.permissions("index.json") == 0o444, "no umask: 0444 as asked")
        #expect(scratch.names() == ["index.json"])
        #expect(FileSystem.tempPath(beside: "/a/b/c.json").hasPrefix("/a/b/.tmp-c.json-"))
    }

    @Test func createNewNeverReplaces() throws {
        let scratch = try TestFolder()
        #expect(try FileSystem.createNew(scratch.path("secret"), with: Array("first".utf8), mode: 0o600))
        #expect(try !FileSystem.createNew(scratch.path("secret"), with: Array("second".utf8), mode: 0o600))
        #expect(scratch.read("secret") == "first")
        #expect(try scratch.permissions("secret") == 0o600)
        #expect(scratch.names() == ["secret"], "the staged copy is gone")
        // Racing creators: exactly one wins, and every one of them sees the winner's bytes.
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: 8) { n in
            results.add(try? FileSystem.createNew(scratch.path("raced"), with: Array("writer \(n)".utf8), mode: 0o600))
        }
        #expect(results.all.count == 8 && results.all.allSatisfy { $0 != nil }, "no creator failed")
        #expect(results.all.filter { $0 == true }.count == 1)
        #expect(scratch.read("raced")?.hasPrefix("writer ") == true)
        #expect(scratch.names() == ["raced", "secret"])
    }

    @Test func aFailedCreateOrLinkNamesWhereItFailed() throws {
        let scratch = try TestFolder()
        #expect(throws: PathError("cannot create a file", path: scratch.path("none"), errno: .noSuchFile)) {
            try FileSystem.replace(scratch.path("none/file"), with: [1], mode: 0o644)
        }
        try FileManager.default.createDirectory(atPath: scratch.path("folder"), withIntermediateDirectories: false)
        try scratch.write("folder/inside", "x")
        #expect(throws: PathError("rename", path: scratch.path("folder"), errno: Errno(EISDIR))) {
            try FileSystem.replace(scratch.path("folder"), with: [1], mode: 0o644)
        }
        #expect(scratch.names() == ["folder"], "the temp file is removed")
    }

    /// A disk that fills up during the write: the previous file stays whole, the temp file goes.
    @Test(.enabled(if: Shell.isRoot, "needs root to mount a tmpfs")) func aFullDiskLeavesThePreviousFile() throws {
        let mount = try Mount(size: "64k")
        defer { mount.done() }
        let disk = mount.folder
        try FileSystem.replace(disk.path("index.json"), with: Array("previous".utf8), mode: 0o644)
        let big = [UInt8](repeating: 0x61, count: 256 * 1024)
        #expect(throws: PathError("cannot write", path: disk.url.path, errno: .noSpace)) {
            try FileSystem.replace(disk.path("index.json"), with: big, mode: 0o644)
        }
        #expect(disk.read("index.json") == "previous")
        #expect(disk.names() == ["index.json"])
        #expect(throws: PathError("cannot write", path: disk.url.path, errno: .noSpace)) {
            _ = try FileSystem.createNew(disk.path("new"), with: big, mode: 0o600)
        }
        #expect(disk.names() == ["index.json"])
        // A temp file of a batch (written now, fsynced later) goes the same way.
        let folder = try Folder.open(disk.url.path)
        #expect(throws: PathError("cannot write", path: disk.url.path, errno: .noSpace)) {
            _ = try TempFile.create(".tmp-blob", in: folder, with: big, mode: 0o444)
        }
        #expect(disk.names() == ["index.json"])
    }

    @Test(.enabled(if: Shell.isRoot, "needs root to mount a tmpfs")) func aReadOnlyFileSystemLeavesThePreviousFile() throws {
        let mount = try Mount(size: "1m")
        defer { mount.done() }
        let disk = mount.folder
        try FileSystem.replace(disk.path("index.json"), with: Array("previous".utf8), mode: 0o644)
        try mount.remountReadOnly()
        #expect(throws: PathError("cannot create a file", path: disk.url.path, errno: .readOnlyFileSystem)) {
            try FileSystem.replace(disk.path("index.json"), with: Array("next".utf8), mode: 0o644)
        }
        #expect(disk.read("index.json") == "previous")
        #expect(disk.names() == ["index.json"])
    }

    /// A file written elsewhere under a temp name (a download) is fsynced and made read-only by `finish`.
    @Test func anAdoptedTempFileIsFinishedWithItsMode() throws {
        let scratch = try TestFolder()
        let file = try File.open(scratch.path("partial"), .readWrite, creatingWith: 0o600)
        try file.write(Array("blob".utf8), at: 0)
        let temp = TempFile(adopting: file)
        try temp.finish(mode: 0o444)
        try FileSystem.rename(temp.path, to: scratch.path("blob"))
        #expect(scratch.read("blob") == "blob")
        #expect(try scratch.permissions("blob") == 0o444)
    }
}

private final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Bool?] = []
    func add(_ value: Bool?) { lock.withLock { values.append(value) } }
    var all: [Bool?] { lock.withLock { values } }
}
