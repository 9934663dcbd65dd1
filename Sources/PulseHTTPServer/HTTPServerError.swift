/// Why the server could not start. Each description is one line fit for the terminal.
public enum HTTPServerError: Error, Equatable, CustomStringConvertible {
    /// The listen address is not `host:port` with an IPv4 or bracketed IPv6 literal.
    case badAddress(String)
    /// Another process listens on the address already.
    case addressInUse(String)
    /// Not allowed to listen there (ports below 1024 need privileges).
    case permissionDenied(String)
    /// Any other socket failure.
    case cannotListen(String, reason: String)
    /// libmicrohttpd refused to start (threads, memory, epoll).
    case daemonFailed(String)
    /// `--max-connections` needs more descriptors than the open-files limit (`RLIMIT_NOFILE`, raised to its
    /// hard limit already) allows: `allowed` connections fit, a limit of `needed` would be enough.
    case tooFewDescriptors(maxConnections: Int, allowed: Int, limit: Int, needed: Int)

    public var description: String {
        switch self {
        case let .badAddress(text): "invalid listen address \"\(text)\" (expected host:port, e.g. 127.0.0.1:8080 or [::1]:8080)"
        case let .addressInUse(address): "cannot listen on \(address): address already in use (is another server running?)"
        case let .permissionDenied(address): "cannot listen on \(address): permission denied (ports below 1024 need privileges)"
        case let .cannotListen(address, reason): "cannot listen on \(address): \(reason)"
        case let .daemonFailed(reason): "cannot start the HTTP server: \(reason)"
        case let .tooFewDescriptors(maxConnections, allowed, limit, needed):
            "--max-connections \(maxConnections) needs an open-files limit of \(needed), but it is \(limit) (hard limit), which allows "
                + "\(allowed) connections: raise it (`ulimit -n \(needed)` in the shell, LimitNOFILE=\(needed) in the systemd unit) "
                + "or lower --max-connections"
        }
    }
}
