import Foundation
import PulseCore
import PulseStore
import Synchronization
import PulseTestSupport
import Testing
@testable import PulseOps
@testable import PulseOpsCLI

/// A target that runs `hook` just before a write or a delete: to put a gc in the middle of a push at the
/// worst moment, or a push in the middle of a gc.
final class InterleavingTarget: PushTarget, @unchecked Sendable {
    let inner: any PushTarget
    /// ("write" or "delete", path); runs once, on the first call for which it returns true.
    let when: @Sendable (String, String) -> Bool
    let hook: @Sendable () -> Void
    private let fired = Mutex(false)

    init(_ inner: any PushTarget, when: @escaping @Sendable (String, String) -> Bool, hook: @escaping @Sendable () -> Void) {
        self.inner = inner
        self.when = when
        self.hook = hook
    }

    private func maybe(_ operation: String, _ path: String) {
        guard when(operation, path), fired.withLock({ let first = !$0; $0 = true; return first }) else { return }
        hook()
    }

    var displayName: String { inner.displayName }
    func prepare() throws { try inner.prepare() }
    func size(of path: String) throws -> Int? { try inner.size(of: path) }
    func read(_ path: String) throws -> Data? { try inner.read(path) }
    func list(under prefix: String) throws -> [TargetObject] { try inner.list(under: prefix) }
    func acquireLease(for operation: String, wait: TimeInterval) throws -> any TargetLease { try inner.acquireLease(for: operation, wait: wait) }
    func write(_ path: String, data: Data, kind: PublishedKind) throws {
        maybe("write", path)
        try inner.write(path, data: data, kind: kind)
    }
    func delete(_ path: String) throws {
        maybe("delete", path)
        try inner.delete(path)
    }
}

/// Issue 12 item 3: push and gc of one target never interleave. The interleaving that lost a blob (a
/// push re-using an old blob it found "already there" while gc, seeing only older versions naming it,
/// deletes it) is run on a folder and on S3, in both orders.
@Suite(.serialized) struct LeaseTests {
    static let v1 = ["lease old slide", "lease reused slide"]
    static let v2 = ["lease new slide"]
    /// v3 names the blob only v1 named: a revert of part of the deck.
    static let v3 = ["lease reused slide"]
    static let reused = "assets/\(TestPackage.hash("lease reused slide"))"
    /// gc's clock: two hours on, so every blob is out of a one-hour grace period.
    static let later = Date().addingTimeInterval(7200)

    /// v1 and v2 pushed, v3 built but not pushed.
    func prepare(_ harness: Harness, _ package: TestPackage) throws {
        try package.publish(slides: Self.v1)
        _ = try Pusher(package: package.root, target: harness.target).run()
        try package.publish(slides: Self.v2)
        _ = try Pusher(package: package.root, target: harness.target).run()
        try package.publish(slides: Self.v3)
    }

    func gcArguments(_ harness: Harness) -> [String] { [harness.location, "--keep", "1", "--grace", "1h"] + harness.options }

    /// A gc started while the push is about to commit (it found the re-used blob already there).
    @Test(arguments: TargetKind.allCases)
    func aGcDuringAPushIsRefusedAndThePushedIndexNamesNoMissingBlob(kind: TargetKind) throws {
        let harness = try Harness(kind)
        let package = try TestPackage()
        try prepare(harness, package)
        let gc = Mutex<CLIResult?>(nil)
        let arguments = gcArguments(harness), variables = harness.variables
        let target = InterleavingTarget(harness.target, when: { $0 == "write" && $1 == "index.json" }) {
            gc.withLock { $0 = runCLI(GCCommand.make, arguments, variables: variables, now: Self.later) }
        }
        let report = try Pusher(package: package.root, target: target).run()
        #expect(report.uploaded == 2, "v3's blob list and index.json; the re-used blob was already there")
        let interleaved = try #require(gc.withLock { $0 })
        #expect(interleaved.code == 75, "\(interleaved.err)")
        #expect(interleaved.err.contains("held by a push on host"), "\(interleaved.err)")
        #expect(try harness.paths().contains(Self.reused))
        #expect(try inconsistencies(harness.target).isEmpty)

        // Once the push is done, gc runs and keeps the blob v3 names.
        let after = runCLI(GCCommand.make, arguments, variables: variables, now: Self.later)
        #expect(after.code == 0, "\(after.err)")
        #expect(try harness.paths().contains(Self.reused))
        #expect(try inconsistencies(harness.target).isEmpty)
    }

    /// A push started while gc deletes: refused; run again afterwards, it puts the deleted blob back.
    @Test(arguments: TargetKind.allCases)
    func aPushDuringAGcIsRefusedAndARerunRestoresWhatGcDeleted(kind: TargetKind) throws {
        let harness = try Harness(kind)
        let package = try TestPackage()
        try prepare(harness, package)
        let push = Mutex<CLIResult?>(nil)
        let arguments = [package.root.path, "--to", harness.location] + harness.options, variables = harness.variables
        let target = InterleavingTarget(harness.target, when: { operation, _ in operation == "delete" }) {
            push.withLock { $0 = runCLI(PushCommand.make, arguments, variables: variables) }
        }
        let report = try GarbageCollector(target: target, keep: 1, grace: 3600, dryRun: false, now: Self.later).run()
        #expect(report.blobs.contains(Self.reused), "v1 was dropped, and only it named the blob")
        let interleaved = try #require(push.withLock { $0 })
        #expect(interleaved.code == 75, "\(interleaved.err)")
        #expect(interleaved.err.contains("held by a gc on host"), "\(interleaved.err)")
        #expect(try inconsistencies(harness.target).isEmpty)

        let rerun = runCLI(PushCommand.make, arguments, variables: variables)
        #expect(rerun.code == 0, "\(rerun.err)")
        #expect(try harness.paths().contains(Self.reused))
        #expect(try inconsistencies(harness.target).isEmpty)
    }

    /// `--wait` waits, then gives up with the same answer.
    @Test func aHeldFolderLeaseMakesPushWaitThenGiveUp() throws {
        let harness = try Harness(.folder)
        let package = try TestPackage()
        try package.publish(slides: Self.v1)
        try harness.target.prepare()
        let held = try harness.target.acquireLease(for: "gc", wait: 0)
        let start = Date()
        let refused = runCLI(PushCommand.make, [package.root.path, "--to", harness.location, "--wait", "1s"])
        #expect(refused.code == 75)
        #expect(refused.err.contains("\(harness.location)/.lock: held by a gc on host") && refused.err.contains("pid \(getpid())"), "\(refused.err)")
        #expect(Date().timeIntervalSince(start) >= 1)
        held.release()
        #expect(runCLI(PushCommand.make, [package.root.path, "--to", harness.location]).code == 0)
    }

    /// A folder's lock file is there only while a push or gc holds it: a pushed folder copied elsewhere is
    /// a clean public part. One left by a killed holder (no process holds its flock) is simply taken.
    @Test func aFolderLeaseLeavesNoFileAndAKilledHoldersFileIsTaken() throws {
        let harness = try Harness(.folder)
        let package = try TestPackage()
        try package.publish(slides: Self.v1)
        let lock = URL(fileURLWithPath: harness.location).appendingPathComponent(".lock")
        #expect(runCLI(PushCommand.make, [package.root.path, "--to", harness.location]).code == 0)
        #expect(!FileManager.default.fileExists(atPath: lock.path))
        let killed = LeaseHolder(operation: "push", owner: "killed", host: "elsewhere", pid: 3, started: "2026-12-01T14:00:00Z", ttl: 0)
        try killed.bytes.write(to: lock)
        try package.publish(slides: Self.v2)
        #expect(runCLI(PushCommand.make, [package.root.path, "--to", harness.location]).code == 0)
        #expect(runCLI(GCCommand.make, [harness.location, "--keep", "1"]).code == 0)
        #expect(!FileManager.default.fileExists(atPath: lock.path))
        #expect(try inconsistencies(harness.target).isEmpty)
    }

    func writeLease(_ s3: ProxiedS3, _ holder: LeaseHolder) throws {
        try s3.direct.client.put("live/pulse/\(S3Target.leaseName)", body: holder.bytes, contentType: "application/json", cacheControl: "no-store")
    }

    @Test func aLiveS3LeaseIsRespectedALapsedOneIsTakenOver() throws {
        let s3 = try ProxiedS3()
        let package = try TestPackage()
        defer { s3.proxy.stop() }
        try package.publish(slides: Self.v1)
        let push = { runCLI(PushCommand.make, [package.root.path, "--to", s3.location] + s3.options, variables: s3.variables) }

        try writeLease(s3, LeaseHolder(operation: "gc", owner: "other", host: "elsewhere", pid: 7, started: "2026-12-01T14:00:00Z", ttl: 3600))
        let busy = push()
        #expect(busy.code == 75)
        #expect(busy.err.contains(".pulse-lease: held by a gc on host elsewhere (pid 7) since 2026-12-01T14:00:00Z, last renewed"), "\(busy.err)")
        #expect(try !s3.paths().contains("index.json"))

        // Lapsed: not renewed within its time to live, by the store's clock.
        try writeLease(s3, LeaseHolder(operation: "gc", owner: "other", host: "elsewhere", pid: 7, started: "2026-12-01T14:00:00Z", ttl: 0))
        #expect(push().code == 0)
        #expect(try s3.direct.read(S3Target.leaseName) == nil, "released after the push")
    }

    /// A holder that was killed on this machine (its pid is gone) does not block until its lease lapses.
    @Test func theS3LeaseOfAKilledLocalProcessIsTakenOver() throws {
        let s3 = try ProxiedS3()
        let package = try TestPackage()
        defer { s3.proxy.stop() }
        try package.publish(slides: Self.v1)
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        try writeLease(s3, LeaseHolder(operation: "push", owner: "killed", host: ProcessInfo.processInfo.hostName, pid: gone.processIdentifier,
                                       started: "2026-12-01T14:00:00Z", ttl: 3600))
        let result = runCLI(PushCommand.make, [package.root.path, "--to", s3.location] + s3.options, variables: s3.variables)
        #expect(result.code == 0, "\(result.err)")
    }

    /// A store that ignores If-None-Match would let two holders in: refused.
    @Test func aStoreIgnoringConditionalWritesIsRefused() throws {
        let s3 = try ProxiedS3()
        let package = try TestPackage()
        defer { s3.proxy.stop() }
        try package.publish(slides: Self.v1)
        try s3.proxy.inject([.init(method: "PUT", match: S3Target.leaseName, fault: "unconditional")])
        let result = runCLI(PushCommand.make, [package.root.path, "--to", s3.location] + s3.options, variables: s3.variables)
        #expect(result.code == 1)
        #expect(result.err.contains("ignores If-None-Match"), "\(result.err)")
        #expect(try s3.paths().isEmpty, "nothing was sent")
    }

    /// A lease taken away (it lapsed while the push stalled) is noticed at the commit: no index.json.
    @Test func aPushThatLostItsLeaseDoesNotCommit() throws {
        let s3 = try ProxiedS3()
        let package = try TestPackage()
        defer { s3.proxy.stop() }
        try package.publish(slides: Self.v1)
        let direct = s3.direct
        // Just before the pre-commit renewal, another process takes the lease over.
        let target = LeaseHookTarget(s3.target) {
            let thief = LeaseHolder(operation: "gc", owner: "thief", host: "elsewhere", pid: 9, started: "2026-12-01T14:00:00Z", ttl: 3600)
            _ = try? direct.client.put("live/pulse/\(S3Target.leaseName)", body: thief.bytes, contentType: "application/json", cacheControl: "no-store")
        }
        #expect {
            try Pusher(package: package.root, target: target).run()
        } throws: { error in
            OpsError.from(error).message.contains("lost the lease")
        }
        #expect(try !s3.paths().contains("index.json"))
        #expect(LeaseHolder(try #require(try direct.read(S3Target.leaseName)))?.owner == "thief", "someone else's lease is never deleted")
    }

    /// The renewal thread keeps a lease alive past its time to live.
    @Test func anS3LeaseIsRenewedWhileHeld() throws {
        let s3 = try ProxiedS3()
        defer { s3.proxy.stop() }
        let lease = try S3Lease.acquire(client: s3.target.client, key: "live/pulse/\(S3Target.leaseName)", operation: "push", ttl: 1, wait: 0)
        defer { lease.release() }
        let deadline = Date().addingTimeInterval(10)
        var renewals = 0
        while renewals < 3, Date() < deadline {
            renewals = LeaseHolder(try s3.direct.read(S3Target.leaseName) ?? Data())?.renewals ?? 0
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(renewals >= 3)
        try lease.renew()
    }
}

/// A target whose lease runs `beforeRenew` first when asked to renew (push renews right before it commits).
final class LeaseHookTarget: PushTarget, @unchecked Sendable {
    let inner: any PushTarget
    let beforeRenew: @Sendable () -> Void
    init(_ inner: any PushTarget, beforeRenew: @escaping @Sendable () -> Void) {
        self.inner = inner
        self.beforeRenew = beforeRenew
    }
    var displayName: String { inner.displayName }
    func prepare() throws { try inner.prepare() }
    func size(of path: String) throws -> Int? { try inner.size(of: path) }
    func read(_ path: String) throws -> Data? { try inner.read(path) }
    func list(under prefix: String) throws -> [TargetObject] { try inner.list(under: prefix) }
    func write(_ path: String, data: Data, kind: PublishedKind) throws { try inner.write(path, data: data, kind: kind) }
    func delete(_ path: String) throws { try inner.delete(path) }
    func acquireLease(for operation: String, wait: TimeInterval) throws -> any TargetLease {
        HookedLease(try inner.acquireLease(for: operation, wait: wait), before: beforeRenew)
    }

    final class HookedLease: TargetLease, @unchecked Sendable {
        let lease: any TargetLease
        let before: @Sendable () -> Void
        init(_ lease: any TargetLease, before: @escaping @Sendable () -> Void) { self.lease = lease; self.before = before }
        func confirm() throws { try lease.confirm() }
        func renew() throws { before(); try lease.renew() }
        func release() { lease.release() }
    }
}
