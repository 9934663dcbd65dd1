import PulseCore
import PulseHTTPServer
import PulseServerStorage
import PulseSyncAPI

/// What the companion-devices, devices, live, report and audit pages share: the server URL of enrollment
/// links, and short texts for times and scopes.
extension PageContext {
    /// The server URL an enrollment link carries (docs/console.md, "The enrollment link"): `--public-url`;
    /// else the request's `Host` only when the request is trusted (from a `--trusted-proxy`, or from loopback);
    /// else nil (the page then shows the code as text and asks for `--public-url`).
    var enrollmentServer: String? {
        if let configured = console.configuration.publicURL { return configured }
        guard let peer = request.client, !publicURL.isEmpty else { return nil }
        let address = IPAddress(bytes: peer.bytes)
        let trusted = sync.configuration.trustedProxies + PageText.loopback
        return trusted.contains(where: { $0.contains(address) }) ? publicURL : nil
    }
}

/// Short texts the pages show.
enum PageText {
    static let loopback: [IPNetwork] = ["127.0.0.0/8", "::1/128"].compactMap { try? IPNetwork(parsing: $0) }

    /// `2026-12-03 14:05 UTC`.
    static func time(_ seconds: Int64) -> String {
        let iso = TimeText.iso(seconds)  // 2026-12-03T14:05:09Z
        return String(iso.prefix(16)).replacingOccurrences(of: "T", with: " ") + " UTC"
    }

    /// `12 s ago`, `5 min ago`, `3 h ago`, or the time.
    static func ago(_ seconds: Int64, now: Int64) -> String {
        let age = now > seconds ? now - seconds : 0
        if age < 60 { return "\(age) s ago" }
        if age < 3600 { return "\(age / 60) min ago" }
        if age < 86_400 { return "\(age / 3600) h ago" }
        return time(seconds)
    }

    /// `session keynote`, `series devconf-2026`.
    static func scope(_ scope: DeviceScope?) -> String {
        guard let scope else { return "—" }
        return "\(scope.kind) \(scope.id)"
    }
}
