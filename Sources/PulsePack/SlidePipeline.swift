import Foundation
import PulseSystem
import PulseCore
import PulseCrypto
import PulseStore

/// What became of one slide.
struct SlideOutcome: Sendable {
    let n: Int
    let assetHash: Digest
    let bytes: Int
    /// Kept until the key table is written, wiped when released.
    let key: SecretBytes
    let nonce: SecretBytes
    /// The blob was written by this build (false: an identical blob was already stored).
    let isNew: Bool
}

/// Splits, encrypts and stores a deck's slides on several threads.
///
/// Some threads are readers: each has its own slide reader (qpdf documents are not thread-safe) and takes
/// the next slide number from a shared counter. A reader hands the plaintext to a short queue that the
/// other threads seal and store, or, when the queue is full, seals it itself, so no thread waits while
/// there is work. A PDF deck has a reader for every two threads: parsing the document again for each
/// thread would cost more than the pages it reads (the first reader takes the document `Deck.open`
/// parsed). Image slides are read by every thread. The first error stops all threads; the caller
/// discards the batch.
enum SlidePipeline {
    static func run(
        deck: Deck, cipher: SlideCipher, blobs: BlobBatch, workers: Int, progress: @escaping @Sendable () -> Void
    ) throws -> [SlideOutcome] {
        let threads = max(1, min(workers, deck.slideCount))
        let readers = deck.readers(forThreads: threads)
        let state = PipelineState(count: deck.slideCount, readers: readers, queueCapacity: 4 * (threads - readers))
        // Each thread reads into and seals into buffers of its own, kept from slide to slide: a fresh
        // buffer per slide cost a page fault per 4 KiB of it, twice per slide (a tenth of an image build).
        let sealAndStore = { @Sendable (n: Int, plaintext: any ContiguousBytes, ciphertext: inout [UInt8]) throws in
            let sealed = try cipher.seal(plaintext, into: &ciphertext)
            let isNew = try blobs.put(ciphertext[..<sealed.count], hash: sealed.assetHash)
            state.finish(SlideOutcome(
                n: n, assetHash: sealed.assetHash, bytes: sealed.count,
                key: sealed.key, nonce: sealed.nonce, isNew: isNew))
            progress()
        }
        onThreads(threads) { thread in
            var readBuffer: [UInt8] = []
            var sealBuffer: [UInt8] = []
            do {
                if thread < readers {
                    defer { state.readerFinished() }
                    let reader = try deck.makeReader()
                    while let n = state.nextSlide() {
                        let plaintext = try reader.slide(n, buffer: &readBuffer)
                        if !state.offer(n, plaintext) { try sealAndStore(n, plaintext, &sealBuffer) }
                    }
                }
                while let (n, plaintext) = state.take() { try sealAndStore(n, plaintext, &sealBuffer) }
            } catch {
                state.fail(error)
            }
        }
        return try state.outcomes()
    }
}

/// Runs `body(0)` on this thread and `body(1)` … `body(count - 1)` on threads of their own, and waits
/// for all. Unlike `concurrentPerform`, every call is sure to run at the same time as the others, which
/// the pipeline's threads need: a sealer waits for what a reader hands over.
private func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 1..<max(count, 1) {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.stackSize = 8 << 20  // as the main thread: page objects are written recursively
        thread.start()
    }
    body(0)
    group.wait()
}

/// The slide counter, the queue of read slides, the results and the first error, shared by the threads.
private final class PipelineState: Sendable {
    private struct State {
        var nextIndex = 0
        var queue: [(Int, any ContiguousBytes)] = []
        var readersLeft: Int
        var results: [SlideOutcome?]
        var error: (any Error)?
    }

    private let state: Condition<State>
    private let queueCapacity: Int

    init(count: Int, readers: Int, queueCapacity: Int) {
        state = Condition(State(readersLeft: readers, results: Array(repeating: nil, count: count)))
        self.queueCapacity = queueCapacity
    }

    /// The next slide to read, or nil when all are taken or one failed.
    func nextSlide() -> Int? {
        state.withLock { state in
            guard state.error == nil, state.nextIndex < state.results.count else { return nil }
            defer { state.nextIndex += 1 }
            return state.nextIndex
        }
    }

    /// Queues a read slide for another thread; false if the queue is full (the reader seals it itself).
    func offer(_ n: Int, _ plaintext: any ContiguousBytes) -> Bool {
        let queued = state.withLock { state in
            guard state.queue.count < queueCapacity else { return false }
            state.queue.append((n, plaintext))
            return true
        }
        if queued { state.wake(.one) }
        return queued
    }

    /// A queued slide; waits while the queue is empty and a reader is still reading. Nil when there is
    /// nothing left, or after a failure.
    func take() -> (Int, any ContiguousBytes)? {
        state.wait(until: { !$0.queue.isEmpty || $0.readersLeft == 0 || $0.error != nil }) { state in
            guard state.error == nil, !state.queue.isEmpty else { return nil }
            return state.queue.removeFirst()
        }
    }

    func readerFinished() {
        state.withLock(waking: .all) { $0.readersLeft -= 1 }
    }

    func finish(_ outcome: SlideOutcome) {
        state.withLock { $0.results[outcome.n] = outcome }
    }

    func fail(_ error: any Error) {
        state.withLock(waking: .all) { state in
            if state.error == nil { state.error = error }
            state.queue = []
        }
    }

    func outcomes() throws -> [SlideOutcome] {
        try state.withLock { state in
            if let error = state.error { throw error }
            return state.results.map { $0! }
        }
    }
}
