import Foundation

/// The signals a server process takes deliberately, all synchronously: blocked in every thread, then awaited
/// with sigwait on one thread, so none of them runs a handler inside a server thread or kills the process by
/// default (SIGHUP and SIGUSR1 would, silently; SIGQUIT would print a crash backtrace).
///
/// | signal | meaning for a server (what pulse-origin does) |
/// |---|---|
/// | SIGTERM, SIGINT, SIGQUIT | stop gracefully |
/// | SIGHUP | reload configuration (pulse-origin: read the package index again) |
/// | SIGUSR1 | reopen log files, for log rotation |
/// | SIGUSR2 | nothing (logged and ignored) |
///
/// SIGPIPE is ignored: a client that goes away is an error on its own connection, not a process-wide event.
public enum ServerSignals {
    /// The signals taken.
    public static let all: [Int32] = [SIGTERM, SIGINT, SIGQUIT, SIGHUP, SIGUSR1, SIGUSR2]

    /// True for the signals that mean "stop".
    public static func isTermination(_ signal: Int32) -> Bool {
        signal == SIGTERM || signal == SIGINT || signal == SIGQUIT
    }

    /// Blocks `all` (and ignores SIGPIPE). Call before starting any thread, so that every thread inherits the
    /// mask and no server thread is interrupted or killed by them.
    public static func block() {
        signal(SIGPIPE, SIG_IGN)
        var set = signalSet()
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Waits for one of `all` and returns its number.
    public static func wait() -> Int32 {
        var set = signalSet()
        var received: Int32 = 0
        while sigwait(&set, &received) != 0 {}
        return received
    }

    /// Waits up to `seconds` for a stop signal (SIGTERM, SIGINT, SIGQUIT) and returns it, or nil when the time
    /// is up first. Other signals that arrive meanwhile are taken and dropped: the process is already stopping.
    public static func waitForTermination(seconds: Double) -> Int32? {
        var set = signalSet()
        let deadline = monotonicNanoseconds() + UInt64(min(max(0, seconds), 86_400) * 1e9)
        while true {
            let now = monotonicNanoseconds()
            guard now < deadline else { return nil }
            let left = deadline - now
            var timeout = timespec(tv_sec: Int(left / 1_000_000_000), tv_nsec: Int(left % 1_000_000_000))
            let received = sigtimedwait(&set, nil, &timeout)
            if received > 0 && isTermination(received) { return received }
        }
    }

    /// The signal's name, for the log.
    public static func name(_ signal: Int32) -> String {
        switch signal {
        case SIGTERM: "SIGTERM"
        case SIGINT: "SIGINT"
        case SIGQUIT: "SIGQUIT"
        case SIGHUP: "SIGHUP"
        case SIGUSR1: "SIGUSR1"
        case SIGUSR2: "SIGUSR2"
        default: "signal \(signal)"
        }
    }

    private static func signalSet() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in all { sigaddset(&set, signal) }
        return set
    }
}
