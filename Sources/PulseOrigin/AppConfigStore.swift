import Foundation
import PulseCore
import PulseCrypto
import PulseHTTPServer
import PulseStore
import Synchronization

/// The white-label app configs named by index.json (`appconfig: { slug: { packageVersion } }`). index.json is
/// read again whenever its identity (inode, mtime, size) changes, so a rebuild is served without a restart.
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
        /// index.json or the config file cannot be read.
        case unavailable
    }

    private struct State {
        var indexStatus: FileStatus?
        var versions: [String: String] = [:]
        var configs: [String: Config] = [:]
    }

    let package: PublicFolder
    let maxAge: Int
    let headers: OriginHeaders
    let alarm: @Sendable (String) -> Void
    private let state = Mutex(State())

    init(package: PublicFolder, maxAge: Int, headers: OriginHeaders, alarm: @escaping @Sendable (String) -> Void) {
        self.package = package
        self.maxAge = maxAge
        self.headers = headers
        self.alarm = alarm
    }

    /// The current config of org `slug`.
    func lookup(_ slug: String) -> Lookup {
        guard Self.isValidSlug(slug) else { return .unknown }
        let status = try? FileStatus.of(path: package.indexURL.path)
        let cached: (String?, Config?, Bool) = state.withLock { state in
            let stale = state.indexStatus != status
            return (state.versions[slug], state.configs[slug], stale)
        }
        var version = cached.0
        if cached.2 {
            guard let status else {
                alarm("cannot read \(package.indexURL.path); appconfig answers 503 until it is back")
                return .unavailable
            }
            do {
                let index = try package.readIndex()
                let versions = index.appconfig.mapValues(\.packageVersion)
                state.withLock { state in
                    state.indexStatus = status
                    state.versions = versions
                    state.configs = state.configs.filter { versions[$0.key] == $0.value.packageVersion }
                }
                version = versions[slug]
            } catch {
                alarm("cannot read index.json: \(error); keeping the previous index")
                if version == nil { return .unavailable }
            }
        } else if let config = cached.1, config.packageVersion == version {
            return .config(config)
        }
        guard let version else { return .unknown }
        guard Hex.isDigestName(version) else {
            alarm("index.json: appconfig \"\(slug)\" has an invalid packageVersion")
            return .unavailable
        }
        if let config = state.withLock({ $0.configs[slug] }), config.packageVersion == version { return .config(config) }
        let url = package.manifestURL(.appconfig, id: slug, packageVersion: version)
        guard let body = try? Data(contentsOf: url) else {
            alarm("cannot read \(url.path), which index.json names for org \"\(slug)\"")
            return .unavailable
        }
        let config = Config(packageVersion: version, body: [UInt8](body), maxAge: maxAge, headers: headers)
        state.withLock { $0.configs[slug] = config }
        return .config(config)
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
