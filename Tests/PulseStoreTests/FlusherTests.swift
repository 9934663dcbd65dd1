import Foundation
import PulseTestSupport
import Testing
import PulseCore

@testable import PulseCrypto
@testable import PulseStore

/// The blob flusher's threads: few for many quick flushes, every flush run, the first error thrown.
@Suite struct FlusherTests {
    /// Counts runs and lets a test wait for the next one.
    final class Runs: @unchecked Sendable {
        private let condition = NSCondition()
        private var count = 0

        func record() { condition.withLock { count += 1; condition.broadcast() } }

        func wait(for target: Int) { condition.withLock { while count < target { condition.wait() } } }

        var value: Int { condition.withLock { count } }
    }

    @Test func quickFlushesOneAfterAnotherReuseThreads() throws {
        // As on tmpfs: each flush is done before the next is submitted. A thread that ended when the
        // queue was empty made the next submit start another (a clone per blob).
        let flusher = Flusher(threads: 4, batch: 1)
        let runs = Runs()
        for n in 1...50 {
            flusher.submit { runs.record() }
            runs.wait(for: n)
        }
        try flusher.finish()
        #expect(runs.value == 50)
        #expect(flusher.threadsStarted <= 4)
    }

    @Test func fewerFlushesThanABatchRunAtFinish() throws {
        let flusher = Flusher(threads: 4, batch: 16)
        let runs = Runs()
        for _ in 0..<15 { flusher.submit { runs.record() } }
        #expect(flusher.threadsStarted == 0)
        try flusher.finish()
        #expect(runs.value == 15)
    }

    @Test func everyFlushRunsAndTheFirstErrorIsThrown() throws {
        struct Failure: Error {}
        let flusher = Flusher(threads: 4, batch: 4)
        let runs = Runs()
        for n in 0..<103 { flusher.submit { runs.record(); if n == 50 { throw Failure() } } }
        #expect(throws: Failure.self) { try flusher.finish() }
        #expect(runs.value == 103)
        // The error is reported once; the flusher can be used again.
        flusher.submit { runs.record() }
        try flusher.finish()
        #expect(runs.value == 104)
    }

    @Test func blobsWrittenThroughTheOpenFolderCommitUnderTheirNames() throws {
        let temporary = try TestFolder()
        let folder = temporary.url.appendingPathComponent("blobs")
        let store = BlobStore(folder: folder)
        // Made after the batch, as the builder does: the folder is opened at the first put.
        let batch = BlobBatch(store: store)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let blobs = (0..<40).map { Array("blob \($0)".utf8) }
        for bytes in blobs { #expect(try batch.put(bytes, hash: Digest(of: bytes))) }
        #expect(try batch.put(blobs[0], hash: Digest(of: blobs[0])) == false)
        try batch.commit()
        #expect(try store.list() == blobs.map { Digest(of: $0) }.sorted())
        for bytes in blobs { #expect(try Array(store.read((Digest(of: bytes), bytes.count))) == bytes) }
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(!names.contains { $0.hasPrefix(".tmp-") })
        // Stored now: a second batch finds them.
        let again = BlobBatch(store: store)
        #expect(try again.put(blobs[1], hash: Digest(of: blobs[1])) == false)
    }
}
