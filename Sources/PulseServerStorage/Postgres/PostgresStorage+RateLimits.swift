import PulsePostgres

extension PostgresStorage {
    /// Takes one token from the bucket `key` in the database, so every instance takes from the same
    /// bucket: one statement, one round trip, decided under the bucket row's lock. The same bucket as
    /// `TokenBuckets` (starts full at `burst`, refills at `rate` a second, a clock that went back refills
    /// nothing), and the same `Retry-After`.
    public func takeRateToken(_ key: String, limit: RateLimit, at now: Double) throws -> RateDecision {
        let row = try statement { db in
            try db.query(Self.takeToken + " RETURNING last_allowed, tokens", [.text(key), .double(limit.burst), .double(now), .double(limit.rate)]).first
        }
        return try decision(row, limit)
    }

    /// The same take, and in the same statement (one round trip, one snapshot taken after every commit that
    /// answered before this request arrived) whether the device is active and the session's change sequence:
    /// a change another instance committed a moment ago, whose notification has not arrived yet, shows here.
    public func takeRateToken(_ key: String, limit: RateLimit, at now: Double, checking device: String, session: String?) throws
        -> (RateDecision, RequestCheck?)
    {
        let row = try statement { db in
            try db.query("""
                WITH taken AS (\(Self.takeToken) RETURNING last_allowed, tokens)
                SELECT taken.last_allowed, taken.tokens,
                    coalesce((SELECT revoked_at IS NULL FROM devices WHERE id = $5), false),
                    (SELECT change_sequence FROM sessions WHERE id = $6)
                FROM taken
                """, [.text(key), .double(limit.burst), .double(now), .double(limit.rate), .text(device), .text(session)]).first
        }
        let check = try row.map { RequestCheck(deviceActive: try $0.bool(2), sessionSequence: try $0.optionalInt64(3)) }
        return (try decision(row, limit), check)
    }

    /// The bucket's refill, take and answer under its row's lock ($1 key, $2 burst, $3 now, $4 rate).
    private static let takeToken = """
        WITH given AS (SELECT $1::text AS key, $2::float8 AS burst, $3::float8 AS now, $4::float8 AS rate)
        INSERT INTO rate_buckets AS b (key, tokens, updated_at, last_allowed)
        SELECT key, CASE WHEN burst >= 1 THEN burst - 1 ELSE burst END, now, burst >= 1 FROM given
        ON CONFLICT (key) DO UPDATE SET
            tokens = (SELECT least(burst, b.tokens + greatest(0, now - b.updated_at) * rate)
                - CASE WHEN least(burst, b.tokens + greatest(0, now - b.updated_at) * rate) >= 1 THEN 1 ELSE 0 END FROM given),
            updated_at = (SELECT greatest(b.updated_at, now) FROM given),
            last_allowed = (SELECT least(burst, b.tokens + greatest(0, now - b.updated_at) * rate) >= 1 FROM given)
        """

    private func decision(_ row: PostgresRow?, _ limit: RateLimit) throws -> RateDecision {
        guard let row else { throw ServerError(.storage, "database \(configuration.redacted): a rate bucket returned no row") }
        if try row.bool(0) { return .allowed }
        let wait = (1 - (try row.double(1))) / max(limit.rate, 1e-9)
        return .limited(retryAfter: max(1, Int(wait.rounded(.up))))
    }

    /// Drops buckets untouched for an hour (full again long since: the same as no bucket).
    func pruneRateBuckets(at now: Int64) throws {
        _ = try statement { db in try db.query("DELETE FROM rate_buckets WHERE updated_at < $1", [.integer(now - 3600)]) }
    }
}
