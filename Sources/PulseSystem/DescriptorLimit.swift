#if canImport(Glibc)
import Glibc
#endif

/// The process's limit on open file descriptors (`RLIMIT_NOFILE`): one per connection a server keeps open.
public enum DescriptorLimit {
    /// Lifts the soft limit to the hard one (what an unprivileged process may do) and returns the soft limit
    /// now in force; unlimited (`RLIM_INFINITY`) reads as `Int.max`. When the limit cannot be read, nil.
    @discardableResult
    public static func raiseToHard() -> Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return count(limit.rlim_cur)
    }

    /// The soft limit in force now, without changing it; nil when it cannot be read.
    public static var current: Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        return count(limit.rlim_cur)
    }

    private static func count(_ value: rlim_t) -> Int {
        value == rlim_t.max || value > rlim_t(Int.max) ? Int.max : Int(value)
    }
}
