import Foundation
import PulseCore
import PulseCrypto
import PulseHTTPServer
import PulseStore
import PulseSystem
import Synchronization

/// The white-label app configs named by index.json (`appconfig: { slug: { packageVersion } }`). index.json is
/// read again whenever its identity (device, inode, size, modification and change time) changes, looked at
/// once per `recheck` interval at most (a `stat` costs more than the rest of an app-config answer), so a rebuild
/// is served within that interval without a restart, and at once on SIGHUP and on `/healthz`. When it cannot be read or parsed (deleted, half-copied,
/// garbage), the last good index stays in use, the problem is logged once (again only when it changes), and
/// `/healthz` reports it.
final class AppConfigStore: Sendable {
    /// An org's current config, prepared as a 200 and a 304.
    final class Config: Sendable {
        let packageVersion: String
        let tag: [UInt8]
        let ok: SharedResponse
        let notModified: SharedResponse

        init(packageVersion: String, body: [UInt8], maxAge: Int, headers: OriginHeaders) {
            self.packageVersion = packageVersion
            tag = Array(packageVersion.utf8)
            let etag = "\"\(packageVersion)\""
            let cacheControl = "public, max-age=\(maxAge)"
            ok = SharedResponse(HTTPResponse(
                status: 200,
                headers: [
                    HTTPHeader("Content-Type", "application/json"),
                    HTTPHeader("Cache-Control", cacheControl),
                    HTTPHeader("ETag", etag),
                    HTTPHeader("X-Content-Type-Options", "nosniff"),
                ] + headers.cors,
                body: .bytes(body)))
            notModified = SharedResponse(HTTPResponse(
                status: 304, headers: headers.notModifiedHeaders(etag: etag, cacheControl: cacheControl)))
        }
    }

    enum Lookup {
        case config(Config)
        case unknown
        /// The config file named by the index cannot be read.
        case unavailable
    }

    /// What was last seen at index.json's path.
    private enum Seen: Equatable {
        case nothing
        case file(FileStatus)
        case error(Int32)
    }

    private struct State {
        /// The last good index: org slug → packageVersion.
        var versions: [String: String]
        var seen: Seen = .nothing
        /// Why index.json on disk is unusable now; nil when the index in use is what is on disk.
        var problem: String?
        var configs: [String: Config] = [:]
        /// Config files already reported unreadable (slug/packageVersion), so each is logged once.
        var reported: Set<String> = []
    }

    let package: PublicFolder
    /// index.json's path, worked out once: `URL.path` costs tens of thousands of instructions, and every
    /// app-config request looks at the file.
    private let indexPath: String
    let maxAge: Int
    let headers: OriginHeaders
    let alarm: @Sendable (String) -> Void
    private let state: Mutex<State>
    /// One reader of index.json at a time, so a change is logged once.
    private let reading = Mutex(())
    /// How long index.json's identity is trusted before it is looked at again (0: on every request).
    private let recheckNanoseconds: UInt64
    /// When index.json was last looked at (monotonic nanoseconds).
    private let lookedAt = Atomic<UInt64>(0)

    /// - Parameter index: the app configs of index.json as read at start-up (`readIndex`).
    init(package: PublicFolder, index: [String: String], maxAge: Int, headers: OriginHeaders,
         recheckNanoseconds: UInt64, alarm: @escaping @Sendable (String) -> Void) {
        self.package = package
        indexPath = package.indexURL.path
        self.recheckNanoseconds = recheckNanoseconds
        self.maxAge = maxAge
        self.headers = headers
        self.alarm = alarm
        let seen: Seen = (try? FileStatus.of(path: indexPath)).map { .file($0) } ?? .nothing
        state = Mutex(State(versions: index, seen: seen))
        lookedAt.store(SystemClock.monotonicNanoseconds(), ordering: .relaxed)
    }

    /// The app configs named by index.json (org slug → packageVersion). The one place that reads the index's
    /// format: a missing file is an error here (the packager treats it as an empty package).
    static func readIndex(_ package: PublicFolder) throws -> [String: String] {
        guard package.exists else { throw StoreError(path: package.indexURL.path, "does not exist") }
        return try package.readIndex().appconfig.mapValues(\.packageVersion)
    }

    /// Reads index.json again if its identity changed (always when `force`); returns the problem with the file
    /// on disk, nil when the index in use is the one on disk. Its identity is looked at once per recheck interval,
    /// or now when `lookNow` (or `force`).
    @discardableResult
    func refresh(force: Bool = false, lookNow: Bool = false) -> String? {
        let now = SystemClock.monotonicNanoseconds()
        if !force, !lookNow, recheckNanoseconds > 0 {
            let last = lookedAt.load(ordering: .relaxed)
            // A clock read before another thread stamped `last` is not older than it (`now < last`).
            if now < last || now - last < recheckNanoseconds { return state.withLock { $0.problem } }
        }
        lookedAt.store(now, ordering: .relaxed)
        let path = indexPath
        let seen = Self.look(at: path)
        if !force, let unchanged = state.withLock({ $0.seen == seen ? Optional($0.problem) : nil }) { return unchanged }
        return reading.withLock { _ -> String? in
            // Another thread may have read this very version meanwhile.
            let seenNow = Self.look(at: path)
            if !force, let unchanged = state.withLock({ $0.seen == seenNow ? Optional($0.problem) : nil }) { return unchanged }
            let problem: String?
            var fresh: [String: String]?
            if case let .error(code) = seenNow {
                problem = "\(path): cannot read (\(Errno(code)))"
            } else {
                do {
                    fresh = try Self.readIndex(package)
                    problem = nil
                } catch {
                    problem = "\(error)"
                }
            }
            let (previous, previousSeen, count): (String?, Seen, Int) = state.withLock { state in
                let previous = (state.problem, state.seen)
                state.seen = seenNow
                state.problem = problem
                if let fresh {
                    state.versions = fresh
                    state.configs = state.configs.filter { fresh[$0.key] == $0.value.packageVersion }
                }
                return (previous.0, previous.1, state.versions.count)
            }
            // Once per new version of the file (or new problem), not once per request.
            if let problem, problem != previous || seenNow != previousSeen {
                alarm("index.json unusable: \(problem); keeping the last good index (\(count) app configs)")
            } else if problem == nil, previous != nil {
                alarm("index.json usable again: \(count) app configs")
            }
            return problem
        }
    }

    /// Reads index.json now (SIGHUP); one line saying what is in use.
    func reload() -> String {
        if let problem = refresh(force: true) { return "index.json unusable (\(problem)); keeping the last good index" }
        return "index.json read: \(state.withLock { $0.versions.count }) app configs"
    }

    private static func look(at path: String) -> Seen {
        do { return .file(try FileStatus.of(path: path)) } catch { return .error(error.code) }
    }

    /// The current config of org `slug` (index.json looked at again when the recheck interval has passed).
    func lookup(_ slug: String) -> Lookup {
        guard Self.isValidSlug(slug) else { return .unknown }
        refresh()
        let (version, cached): (String?, Config?) = state.withLock { ($0.versions[slug], $0.configs[slug]) }
        guard let version else { return .unknown }
        if let cached, cached.packageVersion == version { return .config(cached) }
        guard Hex.isDigestName(version) else {
            reportOnce("\(slug)/\(version)", "index.json: appconfig \"\(slug)\" has an invalid packageVersion")
            return .unavailable
        }
        let url = package.manifestURL(.appconfig, id: slug, packageVersion: version)
        guard let body = try? Data(contentsOf: url) else {
            reportOnce("\(slug)/\(version)", "cannot read \(url.path), which index.json names for org \"\(slug)\"")
            return .unavailable
        }
        let config = Config(packageVersion: version, body: [UInt8](body), maxAge: maxAge, headers: headers)
        state.withLock { $0.configs[slug] = config }
        return .config(config)
    }

    private func reportOnce(_ key: String, _ message: String) {
        if state.withLock({ $0.reported.insert(key).inserted }) { alarm(message) }
    }

    /// Org slugs are plain names: letters, digits, `-`, `_`, `.` (not leading), at most 128 bytes.
    static func isValidSlug(_ slug: String) -> Bool {
        let utf8 = slug.utf8
        guard let first = utf8.first, first != 0x2e, utf8.count <= 128 else { return false }
        return utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
                || byte == 0x2d || byte == 0x5f || byte == 0x2e
        }
    }
}
