import Foundation
import Synchronization

/// One blob's verification in progress: whoever asks for the blob meanwhile waits for this verdict.
final class Verification: Sendable {
    private struct State {
        var outcome: AssetCache.Lookup?
        var waiters: [@Sendable (AssetCache.Lookup) -> Void] = []
    }

    private let state = Mutex(State())

    /// Calls `body` with the verdict: at once if it is in, otherwise on the verifier thread when it is.
    func whenDone(_ body: @escaping @Sendable (AssetCache.Lookup) -> Void) {
        let outcome = state.withLock { state -> AssetCache.Lookup? in
            if let outcome = state.outcome { return outcome }
            state.waiters.append(body)
            return nil
        }
        if let outcome { body(outcome) }
    }

    func finish(_ outcome: AssetCache.Lookup) {
        let waiting = state.withLock { state in
            state.outcome = outcome
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiting { waiter(outcome) }
    }
}

/// The threads that hash blobs: a few serial queues (lanes), so hashing never runs on a server thread and at
/// most `lanes` files are read at once however many first requests arrive.
final class Verifier: Sendable {
    /// Blobs waiting for or in verification at most; beyond, requests get 503 with Retry-After.
    let maxQueued: Int
    private let lanes: [DispatchQueue]
    private let next = Atomic<Int>(0)
    /// Called on the verifier thread before each file is hashed (tests hold verification here).
    private let willHash: (@Sendable () -> Void)?

    init(lanes: Int, maxQueued: Int = 64, willHash: (@Sendable () -> Void)? = nil) {
        self.lanes = (0..<max(1, lanes)).map { DispatchQueue(label: "pulse-origin.verify.\($0)") }
        self.maxQueued = maxQueued
        self.willHash = willHash
    }

    func run(_ work: @escaping @Sendable () -> Void) {
        let lane = lanes[next.add(1, ordering: .relaxed).newValue % lanes.count]
        let willHash = willHash
        lane.async {
            willHash?()
            work()
        }
    }
}
