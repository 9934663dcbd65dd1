import Foundation
import PulseCore
import PulseStore

/// What became of one slide.
struct SlideOutcome: Sendable {
    let n: Int
    let assetHash: String
    let bytes: Int
    let key: [UInt8]
    let nonce: [UInt8]
    /// The blob was written by this build (false: an identical blob was already stored).
    let isNew: Bool
}

/// Splits, encrypts and stores a deck's slides on several threads.
///
/// Each thread has its own slide reader (qpdf documents are not thread-safe) and takes the next slide
/// number from a shared counter, so a slow slide does not hold the others back. The first error stops
/// all threads; the caller discards the batch.
enum SlidePipeline {
    static func run(
        deck: Deck, cipher: SlideCipher, blobs: BlobBatch, workers: Int, progress: @escaping @Sendable () -> Void
    ) throws -> [SlideOutcome] {
        let state = PipelineState(count: deck.slideCount)
        DispatchQueue.concurrentPerform(iterations: max(1, min(workers, deck.slideCount))) { _ in
            let reader: SlideReader
            do { reader = try deck.makeReader() } catch { return state.fail(error) }
            while let n = state.next() {
                do {
                    let sealed = try cipher.seal(try reader.slide(n))
                    let isNew = try blobs.put(sealed.ciphertext, hash: sealed.assetHash)
                    state.finish(SlideOutcome(
                        n: n, assetHash: sealed.assetHash, bytes: sealed.ciphertext.count,
                        key: sealed.key, nonce: sealed.nonce, isNew: isNew))
                    progress()
                } catch {
                    return state.fail(error)
                }
            }
        }
        return try state.outcomes()
    }
}

/// The counter, results and first error shared by the pipeline's threads.
private final class PipelineState: @unchecked Sendable {
    private let lock = NSLock()
    private var nextIndex = 0
    private var results: [SlideOutcome?]
    private var error: (any Error)?

    init(count: Int) {
        results = Array(repeating: nil, count: count)
    }

    /// The next slide to do, or nil when all are taken or one failed.
    func next() -> Int? {
        lock.withLock {
            guard error == nil, nextIndex < results.count else { return nil }
            defer { nextIndex += 1 }
            return nextIndex
        }
    }

    func finish(_ outcome: SlideOutcome) {
        lock.withLock { results[outcome.n] = outcome }
    }

    func fail(_ error: any Error) {
        lock.withLock { if self.error == nil { self.error = error } }
    }

    func outcomes() throws -> [SlideOutcome] {
        try lock.withLock {
            if let error { throw error }
            return results.map { $0! }
        }
    }
}
