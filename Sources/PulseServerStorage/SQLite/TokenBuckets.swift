import Foundation
import Synchronization

/// Token buckets in memory, for one process: the rate limits of a single box (`SQLiteStorage` holds
/// one). A bucket starts full (`burst` tokens), refills at `rate` tokens a second, and each request
/// takes one; with none left the answer says how long until one is back.
///
/// Sixteen shards, each behind its own lock, so the server's threads rarely wait on each other. A
/// bucket that has refilled completely is the same as no bucket: a shard drops those on every 4096th take
/// and on its first take after ten quiet seconds (a shard few clients hash to may never reach 4096 takes),
/// so memory follows the clients active in the last few seconds, not every client ever seen.
final class TokenBuckets: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: Double
        var limit: RateLimit

        /// True when the bucket is full again by `now`: the same as no bucket.
        func isFull(at now: Double) -> Bool { tokens + max(0, now - updated) * limit.rate >= limit.burst }
    }

    private struct Shard {
        var buckets: [String: Bucket] = [:]
        var takes = 0
        var swept = -Double.infinity
    }

    /// One lock and its buckets (a class: an array cannot hold a `Mutex` itself).
    private final class LockedShard: Sendable {
        let state = Mutex(Shard())
    }

    private let shards: [LockedShard] = (0..<16).map { _ in LockedShard() }

    /// Takes one token from bucket `key`.
    func take(_ key: String, limit: RateLimit, at now: Double) -> RateDecision {
        var hasher = Hasher()
        hasher.combine(key)
        let shard = shards[Int(UInt(bitPattern: hasher.finalize()) % UInt(shards.count))]
        return shard.state.withLock { shard in
            shard.takes += 1
            if shard.takes % 4096 == 0 || now - shard.swept >= 10 {
                shard.buckets = shard.buckets.filter { !$0.value.isFull(at: now) }
                shard.swept = now
            }
            var bucket = shard.buckets[key] ?? Bucket(tokens: limit.burst, updated: now, limit: limit)
            bucket.limit = limit
            // A clock that went back refills nothing (and takes nothing away).
            bucket.tokens = min(limit.burst, bucket.tokens + max(0, now - bucket.updated) * limit.rate)
            bucket.updated = max(bucket.updated, now)
            guard bucket.tokens >= 1 else {
                shard.buckets[key] = bucket
                let wait = (1 - bucket.tokens) / max(limit.rate, 1e-9)
                return .limited(retryAfter: max(1, Int(wait.rounded(.up))))
            }
            bucket.tokens -= 1
            shard.buckets[key] = bucket
            return .allowed
        }
    }

    /// Buckets held now (for tests).
    var count: Int { shards.reduce(0) { total, shard in total + shard.state.withLock { $0.buckets.count } } }
}
