/// The per-credential enrollment counts behind the listings' "enrolled in the last minute" (the table
/// `enrollment_buckets` of both backends): one row per credential and 10-second bucket, upserted in the
/// enroll's own transaction and pruned there, so the count reads a few rows instead of every device of an
/// enrollment wave. PostgreSQL's `pulse_enroll` (schema version 8) writes the same 10 and 600 in SQL.
public enum EnrollmentBuckets {
    /// A bucket's width in seconds.
    public static let width: Int64 = 10
    /// How far back buckets are kept (seconds): `recentEnrollments(since:)` counts nothing older.
    public static let kept: Int64 = 600

    /// The start of the bucket `time` falls in (times are Unix seconds, never negative here; a negative one
    /// still rounds down).
    public static func start(_ time: Int64) -> Int64 {
        let remainder = time % width
        return remainder < 0 ? time - remainder - width : time - remainder
    }
}
