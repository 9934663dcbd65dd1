extension SQLiteStorage {
    /// Takes one token from the bucket `key` in this process's memory (`TokenBuckets`): one box, one SQLite
    /// file, so no other process takes from it. The device-scoped check is the default's (none): this
    /// backend's `generation()` asks the file and is never behind.
    public func takeRateToken(_ key: String, limit: RateLimit, at now: Double) throws -> RateDecision {
        buckets.take(key, limit: limit, at: now)
    }
}
