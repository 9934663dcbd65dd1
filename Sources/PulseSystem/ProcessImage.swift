#if canImport(Glibc)
import Glibc
#endif

/// Starts another program in place of this process (execv): same pid, same open files and terminal, so
/// the exit status, Ctrl-C and `kill` reach the program that does the work, as with git's helpers.
public enum ProcessImage {
    /// Replaces this process with the executable at `path`, given `arguments` (the first is its name).
    /// Returns only if that failed, with the reason.
    public static func replace(with path: String, arguments: [String]) -> String {
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        argv.append(nil)
        execv(path, argv)
        let reason = Errno.current.description
        argv.forEach { free($0) }
        return reason
    }
}
