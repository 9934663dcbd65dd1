import Foundation

/// SIGTERM and SIGINT, taken synchronously: blocked in every thread, then awaited with sigwait.
public enum TerminationSignals {
    /// Blocks SIGTERM and SIGINT (and ignores SIGPIPE). Call before starting any thread, so that every
    /// thread inherits the mask and no server thread is killed by the default action.
    public static func block() {
        signal(SIGPIPE, SIG_IGN)
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Waits for SIGTERM or SIGINT and returns its number.
    public static func wait() -> Int32 {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        var received: Int32 = 0
        while sigwait(&set, &received) != 0 {}
        return received
    }

    /// The signal's name, for the log.
    public static func name(_ signal: Int32) -> String {
        switch signal {
        case SIGTERM: "SIGTERM"
        case SIGINT: "SIGINT"
        default: "signal \(signal)"
        }
    }
}
