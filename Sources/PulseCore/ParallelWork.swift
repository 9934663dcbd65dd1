import Foundation
import Synchronization

/// Runs blocking work on a few threads of its own (not Swift's cooperative pool, which blocking
/// network calls would starve). After the first error no new item starts; that error is rethrown once all
/// stop. Push uploads with it, the reference client downloads with it.
public enum ParallelWork {
    public static func run<Item: Sendable>(_ items: [Item], width: Int, _ body: @escaping @Sendable (Item) throws -> Void) throws {
        guard !items.isEmpty else { return }
        let state = Mutex<(next: Int, error: (any Error)?)>((0, nil))
        let group = DispatchGroup()
        for _ in 0..<max(1, min(width, items.count)) {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                while true {
                    let index: Int? = state.withLock { state in
                        guard state.error == nil, state.next < items.count else { return nil }
                        state.next += 1
                        return state.next - 1
                    }
                    guard let index else { return }
                    do { try body(items[index]) } catch {
                        state.withLock { if $0.error == nil { $0.error = error } }
                        return
                    }
                }
            }
            thread.start()
        }
        group.wait()
        if let error = state.withLock({ $0.error }) { throw error }
    }
}
