import Foundation
import PulseSystem
import PulseTestSupport
import Testing

/// The lock against other processes: util-linux's flock(1) is the other process.
@Suite struct FileLockTests {
    static let flockTool = "/usr/bin/flock"

    /// Whether another process could take the lock now (`flock -n`): its exit status is 0 if it could. flock(1)
    /// is util-linux's, an essential package of Debian: missing, the test fails (it would prove nothing skipped).
    func otherProcessCanLock(_ path: String, shared: Bool = false) throws -> Bool {
        try #require(FileManager.default.isExecutableFile(atPath: Self.flockTool), "\(Self.flockTool) is missing (Debian util-linux)")
        return try Shell.run(Self.flockTool, ["-n", shared ? "-s" : "-x", path, "true"]) == 0
    }

    @Test func excludesAnotherProcessUntilReleased() throws {
        let scratch = try TestFolder()
        let path = scratch.path(".lock")
        var lock = try FileLock.acquire(try File.open(path, .readWrite, creatingWith: 0o644))
        #expect(lock != nil)
        #expect(try !otherProcessCanLock(path))
        #expect(try !otherProcessCanLock(path, shared: true))
        lock?.release()
        #expect(try otherProcessCanLock(path))

        // Released when dropped.
        lock = try FileLock.acquire(try File.open(path, .readWrite, creatingWith: 0o644), .exclusive)
        #expect(try !otherProcessCanLock(path))
        lock = nil
        #expect(try otherProcessCanLock(path))
    }

    @Test func sharedLocksShareAndExcludeAnExclusiveOne() throws {
        let scratch = try TestFolder()
        let path = scratch.path(".lock")
        let lock = try #require(try FileLock.acquire(try File.open(path, .readWrite, creatingWith: 0o644), .shared))
        #expect(try otherProcessCanLock(path, shared: true))
        #expect(try !otherProcessCanLock(path))
        lock.release()
    }

    /// A process (python3, one process without children) holding an exclusive flock on `path` for `seconds`.
    func holder(_ path: String, seconds: Double) throws -> Process {
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        holder.arguments = ["-c", "import fcntl, sys, time; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); time.sleep(float(sys.argv[2]))",
                            path, "\(seconds)"]
        try holder.run()
        var waited = 0
        while try otherProcessCanLock(path), waited < 500 {  // until it has the lock
            Thread.sleep(forTimeInterval: 0.01)
            waited += 1
        }
        return holder
    }

    /// Another process holds it: no wait gives nil at once, a wait gives nil after it, `forever` returns once
    /// the holder lets go, and a holder killed with -9 has let go (the kernel releases its locks).
    @Test func waitsForAnotherHolderAndTakesItOnceItDies() throws {
        let scratch = try TestFolder()
        let path = scratch.path(".lock")
        let killed = try holder(path, seconds: 30)
        defer { if killed.isRunning { kill(killed.processIdentifier, SIGKILL) } }
        let file = try File.open(path, .readWrite, creatingWith: 0o644)
        #expect(try FileLock.acquire(file, wait: .none) == nil)
        var start = Date()
        #expect(try FileLock.acquire(file, wait: .seconds(0.3)) == nil)
        #expect(Date().timeIntervalSince(start) >= 0.3)
        kill(killed.processIdentifier, SIGKILL)
        killed.waitUntilExit()
        var lock = try FileLock.acquire(file, wait: .none)
        #expect(lock != nil)
        #expect(try !otherProcessCanLock(path))
        lock?.release()

        let ending = try holder(path, seconds: 0.5)
        start = Date()
        lock = try FileLock.acquire(try File.open(path, .readWrite), wait: .forever)
        #expect(lock != nil)
        #expect(Date().timeIntervalSince(start) >= 0.2, "waited for the holder")
        ending.waitUntilExit()
    }

    /// The holder's file stays open and writable for who-holds-it notes.
    @Test func theHolderWritesIntoTheLockedFile() throws {
        let scratch = try TestFolder()
        let lock = try #require(try FileLock.acquire(try File.open(scratch.path(".lock"), .readWrite, creatingWith: 0o644)))
        try lock.file.truncate(to: 0)
        try lock.file.write(Array("pid 42".utf8), at: 0)
        #expect(scratch.read(".lock") == "pid 42")
        #expect(try lock.file.read(upTo: 100, at: 0) == Array("pid 42".utf8))
    }
}
