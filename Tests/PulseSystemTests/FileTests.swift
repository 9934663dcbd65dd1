import Foundation
import PulseSystem
import PulseTestSupport
import Testing

@Suite struct FileTests {
    @Test func createNewRefusesAnythingThere() throws {
        let scratch = try TestFolder()
        try scratch.write("taken", "old")
        #expect(throws: PathError("create", path: scratch.path("taken"), errno: .exists)) { try File.createNew(scratch.path("taken"), mode: 0o600) }
        #expect(scratch.read("taken") == "old")
        // A symbolic link is not followed, even to nowhere: nothing is created at its target.
        try FileManager.default.createSymbolicLink(atPath: scratch.path("link"), withDestinationPath: scratch.path("target"))
        #expect(throws: PathError("create", path: scratch.path("link"), errno: .exists)) { try File.createNew(scratch.path("link"), mode: 0o600) }
        #expect(!FileManager.default.fileExists(atPath: scratch.path("target")))

        let file = try File.createNew(scratch.path("new"), mode: 0o600)
        try file.write(Array("fresh".utf8))
        try file.close()
        try file.close()  // again: nothing
        #expect(scratch.read("new") == "fresh")
        #expect(try scratch.permissions("new") == 0o600)
    }

    @Test func writesAndReadsAtOffsetsTruncatesAndTellsWhatItIs() throws {
        let scratch = try TestFolder()
        let file = try File.open(scratch.path("data"), .readWrite, creatingWith: 0o644)
        try file.write(Array("hello world".utf8))
        try file.write(Array("W".utf8), at: 6)
        #expect(try file.read(upTo: 100, at: 0) == Array("hello World".utf8))
        #expect(try file.read(upTo: 3, at: 2) == Array("llo".utf8))
        #expect(try file.read(upTo: 10, at: 50) == [])
        try file.truncate(to: 5)
        try file.sync()
        #expect(try file.read(upTo: 100, at: 0) == Array("hello".utf8))
        try file.setPermissions(0o640)
        let info = try file.info()
        #expect(info.isRegularFile && info.size == 5 && info.permissions == 0o640)
        #expect(info.isSameFile(as: try FileInfo.of(scratch.path("data"))))
        #expect(info.owner == SystemProcess.effectiveUserID)
        #expect(!file.isTerminal)
        #expect(try FileInfo.of(scratch.url.path).isFolder)
        #expect(throws: PathError("open", path: scratch.path("missing"), errno: .noSuchFile)) { try File.open(scratch.path("missing")) }
    }

    /// A file opened for appending gets every write at its end, and `redirect` sends a descriptor's writes to
    /// another file (an access log reopened after logrotate moved it).
    @Test func appendsAndRedirects() throws {
        let scratch = try TestFolder()
        let log = try File.openForAppending(scratch.path("log"), creatingWith: 0o644)
        let other = try File.open(scratch.path("log"), .writeOnly)
        try log.write(Array("one\n".utf8))
        try other.write(Array("ONE".utf8))  // overwrites "one" at offset 0
        try log.write(Array("two\n".utf8))  // still at the end
        #expect(scratch.read("log") == "ONE\ntwo\n")
        try FileSystem.rename(scratch.path("log"), to: scratch.path("log.1"))
        try log.redirect(to: try File.openForAppending(scratch.path("log"), creatingWith: 0o644))
        try log.write(Array("three\n".utf8))
        #expect(scratch.read("log") == "three\n")
        #expect(scratch.read("log.1") == "ONE\ntwo\n")
    }

    @Test func aFolderWorksRelativeToItself() throws {
        let scratch = try TestFolder()
        let folder = try Folder.open(scratch.url.path)
        let file = try folder.createNew(".tmp-a", mode: 0o600)
        try file.write(Array("abc".utf8))
        try file.close()
        #expect(folder.sizeOfRegularFile(".tmp-a") == 3)
        #expect(throws: PathError("create", path: scratch.path(".tmp-a"), errno: .exists)) { try folder.createNew(".tmp-a", mode: 0o600) }
        try folder.rename(".tmp-a", to: "a")
        try folder.sync()
        #expect(scratch.names() == ["a"])
        #expect(folder.sizeOfRegularFile(".tmp-a") == nil)
        try folder.remove("a")
        #expect(scratch.names() == [])
        #expect(throws: PathError("open folder", path: scratch.path("none"), errno: .noSuchFile)) { try Folder.open(scratch.path("none")) }
    }

    @Test func pathCallsSayWhatFailed() throws {
        let scratch = try TestFolder()
        #expect(try FileSystem.makeFolder(scratch.path("sub"), mode: 0o700))
        #expect(try !FileSystem.makeFolder(scratch.path("sub"), mode: 0o700))
        #expect(throws: PathError("mkdir", path: scratch.path("none/sub"), errno: .noSuchFile)) {
            try FileSystem.makeFolder(scratch.path("none/sub"), mode: 0o700)
        }
        try scratch.write("a", "a")
        try FileSystem.link(scratch.path("a"), as: scratch.path("b"))
        #expect(throws: PathError("link", path: scratch.path("b"), errno: .exists)) { try FileSystem.link(scratch.path("a"), as: scratch.path("b")) }
        try FileSystem.setPermissions(scratch.path("b"), 0o604)
        #expect(try scratch.permissions("a") == 0o604)
        #expect(try FileSystem.removeIfPresent(scratch.path("b")))
        #expect(try !FileSystem.removeIfPresent(scratch.path("b")))
        #expect(throws: PathError("remove", path: scratch.path("b"), errno: .noSuchFile)) { try FileSystem.remove(scratch.path("b")) }
        #expect(FileSystem.isAccessible(scratch.url.path, [.read, .write, .search]))
        #expect(!FileSystem.isAccessible(scratch.path("b"), .read))
        #expect(FileInfo.sizeOfRegularFile(scratch.path("a")) == 1)
        #expect(FileInfo.sizeOfRegularFile(scratch.url.path) == nil)
        try FileManager.default.createSymbolicLink(atPath: scratch.path("link"), withDestinationPath: "a")
        #expect(try FileInfo.ofLink(scratch.path("link")).kind == .symbolicLink)
        #expect(try FileInfo.of(scratch.path("link")).kind == .regular)
    }

    @Test func processesAndClocks() throws {
        #expect(SystemProcess.currentID == ProcessInfo.processInfo.processIdentifier)
        #expect(!SystemProcess.isGone(SystemProcess.currentID))
        #expect(!SystemProcess.isGone(1), "pid 1 exists (another user's process counts as there)")
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        #expect(SystemProcess.isGone(child.processIdentifier))
        let before = SystemClock.monotonicNanoseconds()
        Thread.sleep(forTimeInterval: 0.01)
        #expect(SystemClock.monotonicNanoseconds() - before >= 10_000_000)
        #expect(SystemClock.threadCPUSeconds() > 0)
    }

    @Test func readsWholeFilesIntoOneKeptBuffer() throws {
        let scratch = try TestFolder()
        let big = String(repeating: "0123456789", count: 20_000), small = "tiny"
        try scratch.write("big", big)
        try scratch.write("small", small)
        try scratch.write("empty", "")
        var buffer: [UInt8] = []
        let bigCount = try File.open(scratch.path("big")).readAll(into: &buffer, limit: 1 << 20)
        #expect(bigCount == 200_000)
        #expect(String(decoding: buffer[..<bigCount], as: UTF8.self) == big)
        let grown = buffer.count
        // The buffer keeps its size; only the count says what is the file's.
        let smallCount = try File.open(scratch.path("small")).readAll(into: &buffer, limit: 1 << 20)
        #expect(String(decoding: buffer[..<smallCount], as: UTF8.self) == small)
        #expect(buffer.count == grown)
        #expect(try File.open(scratch.path("empty")).readAll(into: &buffer, limit: 1 << 20) == 0)
        // A file longer than the limit: limit + 1 bytes are read, no more.
        #expect(try File.open(scratch.path("big")).readAll(into: &buffer, limit: 1000) == 1001)
        #expect(String(decoding: buffer[..<1001], as: UTF8.self) == String(big.prefix(1001)))
        var fresh: [UInt8] = []
        #expect(try File.open(scratch.path("big")).readAll(into: &fresh, limit: 1000) == 1001)
        #expect(fresh.count <= 1001)
        // A folder opens but does not read: the error names it.
        #expect(throws: PathError.self) { try File.open(scratch.url.path).readAll(into: &buffer, limit: 10) }
    }
}
