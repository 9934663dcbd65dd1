import Synchronization

/// Counts round trips to the server: one per statement sent (`PQexec`, `PQexecParams`,
/// `PQexecPrepared`) and one per statement prepared on a connection for the first time
/// (`PQprepare`). Opening a connection is not counted. A pool shares one counter among its
/// connections, so a caller can measure what one storage call costs.
public final class RoundTripCounter: Sendable {
    private let count = Atomic<Int>(0)

    public init() {}

    /// Round trips so far.
    public var value: Int { count.load(ordering: .relaxed) }

    func add() { count.add(1, ordering: .relaxed) }
}
