import Synchronization

/// A counter series: a count that only goes up (requests, bytes, refusals). Incrementing is one relaxed
/// atomic add: no lock, no allocation. Keep the handle (`let keysAnswered = requests[.keys, .success]`)
/// where the path is hot; the family's subscript is a dictionary lookup on top.
public final class Counter: Sendable {
    @usableFromInline let count = Atomic<UInt64>(0)

    init() {}

    /// Adds one.
    @inlinable public func increment() { add(1) }

    /// Adds `amount` (wrapping at 2⁶⁴, which a count of events or bytes does not reach).
    @inlinable public func add(_ amount: UInt64) { count.wrappingAdd(amount, ordering: .relaxed) }

    /// The count now.
    public var value: UInt64 { count.load(ordering: .relaxed) }
}
