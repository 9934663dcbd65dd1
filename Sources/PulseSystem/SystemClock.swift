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

    /// When the machine booted, in seconds since the epoch: CLOCK_REALTIME less CLOCK_BOOTTIME (which counts
    /// from boot, suspends included), read back to back. It is what `btime` of `/proc/stat` says (the kernel
    /// computes that the same way, truncated to a second), without reading `/proc/stat`, which a unit with
    /// `ProcSubset=pid` cannot see; it follows a step of the wall clock, as `btime` does.
    public static func bootWallClockSeconds() -> Double {
        var boot = timespec(), real = timespec()
        clock_gettime(CLOCK_BOOTTIME, &boot)
        clock_gettime(CLOCK_REALTIME, &real)
        return Double(real.tv_sec - boot.tv_sec) + Double(real.tv_nsec - boot.tv_nsec) / 1e9
    }

    /// CPU time the calling thread has used, in seconds (CLOCK_THREAD_CPUTIME_ID).
    public static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
