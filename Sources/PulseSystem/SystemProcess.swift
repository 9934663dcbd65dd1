#if canImport(Glibc)
import Glibc
#endif

/// This process and others, as the system numbers them.
public enum SystemProcess {
    /// This process's id (getpid).
    public static var currentID: Int32 { getpid() }

    /// The user id this process acts as (geteuid): the owner of the files it creates.
    public static var effectiveUserID: UInt32 { geteuid() }

    /// True when no process `pid` exists on this machine (kill(pid, 0) fails with ESRCH); false also when it
    /// exists but belongs to another user.
    public static func isGone(_ pid: Int32) -> Bool {
        pid > 0 && kill(pid, 0) != 0 && errno == ESRCH
    }

    /// Ends this process at once with `status` (_exit): no atexit handlers, no flushing, for a watchdog whose
    /// process is stuck elsewhere.
    public static func exitImmediately(_ status: Int32) -> Never { _exit(status) }
}
