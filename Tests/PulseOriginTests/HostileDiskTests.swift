import Foundation
import PulseCrypto
import PulseHTTPServer
import PulseSystem
import Synchronization
import PulseTestSupport
import Testing
@testable import PulseOrigin

/// Issue 10 items 1–3: what is on disk under a blob's name cannot hang the server, slip wrong bytes into a 200,
/// or tie up its threads.
@Suite(.serialized) struct HostileDiskTests {
    /// Item 1: a FIFO named like a blob used to block both server threads in open(); now it is a corrupt blob.
    @Test func fifoNamedLikeABlobIsCorruptNotAHang() throws {
        let package = try TestPackage.publicPart()
        let name = SHA256.hex([4, 2])
        let fifo = package.assets.appendingPathComponent(name).path
        #expect(mkfifo(fifo, 0o644) == 0)
        // If a reader ever blocks in open(), opening the write end releases it, so a failure is not a hang.
        defer {
            let writer = open(fifo, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
        }
        let alarms = AlarmLog()
        let running = try RunningOrigin(package, alarms: alarms)
        let clients = try (0..<2).map { _ in try running.client(timeout: 5) }
        for client in clients { try client.send("GET /api/sync/asset/\(name) HTTP/1.1\r\nHost: x\r\n\r\n") }
        for client in clients {
            let response = try client.readResponse()
            #expect(response.status == 500)
            #expect(response.header("Cache-Control") == "no-store")
        }
        #expect(try running.client(timeout: 2).request("GET", "/healthz").status == 200)
        #expect(alarms.all.count == 1)
        #expect(alarms.all.first?.contains("not a regular file (fifo)") == true)
        let started = Date()
        running.server.shutdown(drainSeconds: 2)
        #expect(Date().timeIntervalSince(started) < 2)
    }

    /// Sockets, symbolic links and folders under a blob's name: corrupt, never read or followed.
    @Test func otherNonRegularFilesAreCorrupt() throws {
        let package = try TestPackage.publicPart()
        let target = try package.addBlob([1, 2, 3])
        let link = SHA256.hex([1, 2, 3, 4])
        try FileManager.default.createSymbolicLink(atPath: package.assets.appendingPathComponent(link).path, withDestinationPath: target)
        let folder = SHA256.hex([5])
        try FileManager.default.createDirectory(at: package.assets.appendingPathComponent(folder), withIntermediateDirectories: false)
        let socketName = SHA256.hex([6])
        let listener = try UnixSocket(path: package.assets.appendingPathComponent(socketName).path)
        defer { _ = listener }
        let origin = try package.origin()
        for name in [link, folder, socketName] {
            let response = get(origin, "/api/sync/asset/\(name)")
            #expect(response.status == 500, "\(name)")
            #expect(response.note == "corrupt", "\(name)")
        }
        #expect(get(origin, "/api/sync/asset/\(target)").status == 200)
        #expect(origin.assets.hashings.load(ordering: .relaxed) == 1)
    }

    /// Item 2: an edit in place with the modification time set back used to keep its identity, and the disk path
    /// then served wrong bytes with 200. The change time gives it away.
    @Test func editInPlaceWithRestoredModificationTimeIsCaught() throws {
        let package = try TestPackage.publicPart()
        let bytes = TestPackage.randomBytes(50_000)
        let hash = try package.addBlob(bytes)
        let path = package.assets.appendingPathComponent(hash).path
        let running = try RunningOrigin(package, origin: { $0.memoryBudget = 0; $0.recheckSeconds = 0 })
        let client = try running.client()
        let first = try client.request("GET", "/api/sync/asset/\(hash)")
        #expect(first.status == 200)
        #expect(first.body == bytes)

        var before = stat()
        #expect(stat(path, &before) == 0)
        // The kernel's file times tick coarsely (a few ms): wait for the clock to move past the file's change time,
        // so the edit below cannot land in the same tick.
        try TestPackage.waitForClockTick(after: before.st_ctim)
        let file = open(path, O_WRONLY)
        #expect(file >= 0)
        var flipped: UInt8 = bytes[1234] ^ 0x01
        #expect(pwrite(file, &flipped, 1, 1234) == 1)
        close(file)
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)  // touch -r: the modification time is as before
        var after = stat()
        #expect(stat(path, &after) == 0)
        #expect(after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec)
        #expect(after.st_ino == before.st_ino && after.st_size == before.st_size)

        for _ in 0..<3 {
            let response = try client.request("GET", "/api/sync/asset/\(hash)")
            #expect(response.status == 500)
            #expect(SHA256.hex(response.body) != hash || response.body.isEmpty)
        }
    }

    /// Item 3: one verification per blob however many ask at once, off the server threads: /healthz answers
    /// while a blob is being hashed, and both requests for it get the one verdict.
    @Test func oneVerificationPerBlobOffTheServerThreads() throws {
        let package = try TestPackage.publicPart()
        let bytes = TestPackage.randomBytes(300_000)
        let hash = try package.addBlob(bytes)
        let gate = Gate()
        let running = try RunningOrigin(package, willHash: { gate.wait() })
        let first = try running.client(), second = try running.client()
        try first.send("GET /api/sync/asset/\(hash) HTTP/1.1\r\nHost: x\r\n\r\n")
        try second.send("GET /api/sync/asset/\(hash) HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(gate.waitUntilHeld(timeout: 5))
        #expect(eventually(within: 5) { running.server.requestsInFlight == 2 })
        // Both server threads are free while the verifier is held.
        for _ in 0..<4 { #expect(try running.client(timeout: 2).request("GET", "/healthz").status == 200) }
        gate.open()
        #expect(try first.readResponse().body == bytes)
        #expect(try second.readResponse().body == bytes)
        #expect(running.origin.assets.hashings.load(ordering: .relaxed) == 1)
        let notes = running.accessLog(lines: 6).filter { $0.contains(hash) }.map { $0.split(separator: " ").last.map(String.init) ?? "" }
        #expect(notes == ["verified", "verified"])
    }

    /// Item 3: a blob over --max-blob-size is corrupt without being read (a sparse 20 GB file used to hold a thread
    /// for a minute).
    @Test func hugeBlobIsRefusedUnread() throws {
        let package = try TestPackage.publicPart()
        let name = SHA256.hex([7, 7])
        let path = package.assets.appendingPathComponent(name).path
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        #expect(truncate(path, 20 << 30) == 0)  // sparse: no disk space used
        let alarms = AlarmLog()
        let origin = try package.origin({ _ in }, alarms: alarms)
        let started = Date()
        for _ in 0..<3 { #expect(get(origin, "/api/sync/asset/\(name)").status == 500) }
        #expect(Date().timeIntervalSince(started) < 1)
        #expect(origin.assets.hashings.load(ordering: .relaxed) == 0)
        #expect(alarms.all.count == 1)
        #expect(alarms.all.first?.contains("over the 268435456-byte limit") == true)
        let small = try package.origin { $0.maxBlobBytes = 10 }
        let hash = try package.addBlob(Array(repeating: 1, count: 11))
        #expect(get(small, "/api/sync/asset/\(hash)").status == 500)
    }

    /// When too many blobs wait for verification, further first requests get 503 with Retry-After.
    @Test func fullVerificationQueueAnswers503() throws {
        let package = try TestPackage.publicPart()
        let gate = Gate()
        let origin = try package.origin({ $0.verifyThreads = 1; $0.verifyQueue = 2 }, willHash: { gate.wait() })
        let hashes = try (0..<3).map { try package.addBlob([UInt8($0), 9]) }
        let waiting = hashes.prefix(2).map { origin.respond(to: HTTPRequest(.get, "/api/sync/asset/\($0)")) }
        #expect(waiting.allSatisfy { $0.deferred != nil })
        let refused = origin.respond(to: HTTPRequest(.get, "/api/sync/asset/\(hashes[2])"))
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") == "1")
        #expect(refused.header("Cache-Control") == "no-store")
        gate.open()
        for response in waiting { #expect(response.deferred?.wait(timeout: 10)?.status == 200) }
        #expect(get(origin, "/api/sync/asset/\(hashes[2])").status == 200)
    }
}

/// Holds verifier threads until opened; tells when one is held.
final class Gate: @unchecked Sendable {
    private let condition = NSCondition()
    private var isOpen = false
    private var held = 0

    func wait() {
        condition.lock()
        held += 1
        condition.broadcast()
        while !isOpen { condition.wait() }
        condition.unlock()
    }

    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }

    func waitUntilHeld(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while held == 0 { if !condition.wait(until: deadline) { return held > 0 } }
        return true
    }
}

/// A listening Unix socket at `path`, removed on deinit. Bound under a short name first (a socket address holds
/// at most 107 bytes of path), then renamed into place.
final class UnixSocket {
    let fd: Int32
    let path: String

    init(path: String) throws {
        self.path = path
        let short = "/tmp/pulse-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(short.utf8))
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 1) == 0, rename(short, path) == 0 else {
            throw RawHTTPConnection.Failure("unix socket \(path)")
        }
    }

    deinit {
        close(fd)
        unlink(path)
    }
}
