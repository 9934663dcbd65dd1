#if canImport(Glibc)
import Glibc
#endif

/// The system's clocks that Foundation does not offer directly.
public enum SystemClock {
    /// Nanoseconds of CLOCK_MONOTONIC: never set back, for durations and cache ages.
    public static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// CPU time the calling thread has used, in seconds (CLOCK_THREAD_CPUTIME_ID).
    public static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
