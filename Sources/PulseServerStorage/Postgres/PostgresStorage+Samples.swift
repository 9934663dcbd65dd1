import PulseCore
import PulsePostgres

extension PostgresStorage {
    public func recordSignedRequest(replayKey: [UInt8], expiresAt: Int64, sample: DiagSample?, at now: Int64) throws -> Bool {
        // One statement: the unique insert decides (a key seen before and not yet expired changes
        // nothing), and the sample is inserted only when the key was. One round trip per signed POST.
        try statement { db in
            try db.query("""
                WITH recorded AS (
                    INSERT INTO replay_keys (key, expires_at) VALUES ($1, $2)
                    ON CONFLICT (key) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE replay_keys.expires_at <= $3
                    RETURNING 1
                ), sampled AS (
                    INSERT INTO diag_samples (session_id, device_id, received_at, build, platform, connection)
                    SELECT $4::text, $5::text, $6::bigint, $7::text, $8::text, $9::text FROM recorded WHERE $4::text IS NOT NULL
                    RETURNING 1
                )
                SELECT count(*) FROM recorded
                """, [
                    .bytes(replayKey), .integer(expiresAt), .integer(now), .text(sample?.sessionId), .text(sample?.deviceId),
                    .integer(sample?.receivedAt), .text(sample?.build), .text(sample?.platform),
                    .text(sample.map { String(decoding: $0.connection.canonicalBytes, as: UTF8.self) }),
                ]).first?.int(0) == 1
        }
    }

    /// Also drops rate buckets untouched for an hour (the server calls this periodically).
    public func pruneReplayKeys(at now: Int64) throws -> Int {
        try pruneRateBuckets(at: now)
        return try statement { db in try db.query("DELETE FROM replay_keys WHERE expires_at <= $1", [.integer(now)]).affectedRows }
    }

    private static let sampleColumns = "SELECT session_id, device_id, received_at, build, platform, connection FROM diag_samples"

    private static func sample(_ row: PostgresRow) throws -> DiagSample {
        DiagSample(
            sessionId: try row.string(0), deviceId: try row.string(1), receivedAt: try row.int64(2), build: try row.string(3),
            platform: try row.string(4), connection: (try? JSONValue.parse(Array(try row.string(5).utf8))) ?? .null)
    }

    public func samples(sessionId: String) throws -> [DiagSample] {
        try read { db in try db.query(Self.sampleColumns + " WHERE session_id = $1 ORDER BY id", [.text(sessionId)]).rows.map(Self.sample) }
    }

    public func latestSamples(sessionId: String, since: Int64) throws -> [DiagSample] {
        try read { db in
            try db.query(Self.sampleColumns + """
                 WHERE id IN (SELECT sample_id FROM diag_latest WHERE session_id = $1 AND received_at >= $2)
                ORDER BY device_id COLLATE "C"
                """, [.text(sessionId), .integer(since)]).rows.map(Self.sample)
        }
    }

    public func latestSamples(sessionId: String, since: Int64, limit: Int) throws -> (samples: [DiagSample], devices: Int) {
        try read { db in
            let devices = try db.query(
                "SELECT count(*) FROM diag_latest WHERE session_id = $1 AND received_at >= $2", [.text(sessionId), .integer(since)]
            ).first?.int64(0) ?? 0
            let samples = try db.query(Self.sampleColumns + """
                 WHERE id IN (
                    SELECT sample_id FROM diag_latest WHERE session_id = $1 AND received_at >= $2 ORDER BY received_at DESC, device_id COLLATE "C" DESC LIMIT $3)
                ORDER BY received_at DESC, device_id COLLATE "C" DESC
                """, [.text(sessionId), .integer(since), .integer(Int64(max(0, limit)))]).rows.map(Self.sample)
            return (samples, Int(clamping: devices))
        }
    }

    public func sampleStamp(sessionId: String) throws -> SampleStamp {
        try read { db in
            let row = try db.query("SELECT count(*), coalesce(max(id), 0) FROM diag_samples WHERE session_id = $1", [.text(sessionId)]).first
            return SampleStamp(count: try row?.int64(0) ?? 0, newest: try row?.int64(1) ?? 0)
        }
    }

    public func latestSamples(deviceIds: [String]) throws -> [String: DiagSample] {
        guard !deviceIds.isEmpty else { return [:] }
        let samples = try read { db in
            try db.query(Self.sampleColumns + """
                 WHERE id IN (SELECT max(sample_id) FROM diag_latest WHERE device_id IN (SELECT jsonb_array_elements_text($1::jsonb)) GROUP BY device_id)
                """, [.text(IdList.json(deviceIds))]).rows.map(Self.sample)
        }
        return Dictionary(samples.map { ($0.deviceId, $0) }, uniquingKeysWith: { first, _ in first })
    }
}
