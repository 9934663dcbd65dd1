import Foundation
import PulseHTTPServer
import PulseStore
import PulseSystem
import Synchronization

/// The responder of pulse-origin: content-addressed blobs (`/api/sync/asset/<hash>`), white-label app configs
/// (`/api/sync/appconfig?org=`), `/healthz`, `/livez` and `/readyz`, for a CDN or shared cache in front that is not trusted.
public final class Origin: HTTPResponder {
    public let configuration: OriginConfiguration
    let package: PublicFolder
    let assets: AssetCache
    let appConfigs: AppConfigStore
    let headers: OriginHeaders
    let accessLog: AccessLog?
    let alarm: @Sendable (String) -> Void
    let notFound: SharedResponse
    let notAllowed: SharedResponse
    let broken: SharedResponse
    let badRequest: SharedResponse
    let retryLater: SharedResponse
    let preflightAnswer: SharedResponse
    let optionsAnswer: SharedResponse
    let healthy: SharedResponse
    /// `/readyz` answers 503 once a stop has begun (`beginDraining()`), before the listener closes.
    public let readiness = Readiness()

    /// Blob files hashed so far, each verification reading its file once (metrics).
    public var verifications: Int { assets.hashings.load(ordering: .relaxed) }
    /// Blob files found corrupt so far, each version of a file once (metrics).
    public var corruptBlobs: Int { assets.corruptFound.load(ordering: .relaxed) }

    /// The request headers the origin reads.
    public static let requestHeaders = [
        "if-none-match", "range", "if-range", "origin", "access-control-request-method",
    ]

    /// Checks the package folder and prepares to serve it.
    /// - Parameters:
    ///   - alarm: where loud operational messages go (a corrupt blob, an unusable index); standard error by default.
    ///   - willHash: called on the verifier thread before each blob is hashed (for tests).
    /// - Throws: `OriginError` when the folder is missing, unreadable or not a package.
    public init(
        configuration: OriginConfiguration, accessLog: AccessLog?,
        alarm: @escaping @Sendable (String) -> Void = Origin.standardError,
        willHash: (@Sendable () -> Void)? = nil
    ) throws {
        self.configuration = configuration
        self.accessLog = accessLog
        self.alarm = alarm
        package = PublicFolder.locate(configuration.packageRoot)
        let index = try Self.checkPackage(package)
        headers = OriginHeaders(allowOrigin: configuration.allowOrigin)
        assets = AssetCache(
            folder: package.assets.folder.path, memoryBudget: max(0, configuration.memoryBudget),
            memoryMaxBlob: max(0, configuration.memoryMaxBlob), maxBlobBytes: max(0, configuration.maxBlobBytes),
            recheckNanoseconds: UInt64(max(0, configuration.recheckSeconds) * 1e9), headers: headers,
            verifier: Verifier(lanes: configuration.verifyThreads, maxQueued: max(1, configuration.verifyQueue), willHash: willHash),
            alarm: alarm)
        appConfigs = AppConfigStore(
            package: package, index: index, maxAge: configuration.appconfigMaxAge, headers: headers,
            recheckNanoseconds: UInt64(max(0, configuration.recheckSeconds) * 1e9), alarm: alarm)
        notFound = SharedResponse(headers.uncacheable(404, "not found\n"))
        let allow = HTTPHeader("Allow", "GET, HEAD, OPTIONS")
        notAllowed = SharedResponse(headers.uncacheable(405, "method not allowed\n", extra: [allow]))
        broken = SharedResponse(headers.uncacheable(500, "internal server error\n"))
        badRequest = SharedResponse(headers.uncacheable(400, "missing ?org=<slug>\n"))
        retryLater = SharedResponse(headers.uncacheable(503, "busy, try again in a second\n", extra: [HTTPHeader("Retry-After", "1")]))
        preflightAnswer = SharedResponse(HTTPResponse(status: 204, headers: [allow, HTTPHeader("Cache-Control", "no-store")] + headers.preflight))
        optionsAnswer = SharedResponse(HTTPResponse(status: 204, headers: [allow, HTTPHeader("Cache-Control", "no-store")]))
        healthy = SharedResponse(headers.uncacheable(200, "ok\n"))
    }

    public static let standardError: @Sendable (String) -> Void = { message in
        FileHandle.standardError.write(Data("pulse-origin: \(message)\n".utf8))
    }

    public func finished(_ exchange: HTTPExchange) {
        accessLog?.record(exchange)
    }

    /// Reads index.json again now (SIGHUP) and says in one line what it found.
    public func reloadIndex() -> String { appConfigs.reload() }

    private static let assetPrefix = Array("/api/sync/asset/".utf8)
    private static let appconfigPath = Array("/api/sync/appconfig".utf8)
    private static let healthPath = Array("/healthz".utf8)

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let target = request.target
        // Blobs first: nearly every request is one, and it needs no other route compared.
        if Bytes.hasPrefix(target[...], Self.assetPrefix) {
            guard request.method == .get || request.method == .head else { return refused(request, isHealthOrProbe: false) }
            // Exactly 64 lowercase hex digits and nothing else: no query, no slash, no escapes.
            guard let digest = BlobDigest(hex: target, from: Self.assetPrefix.count) else {
                return HTTPResponse(notFound, note: "bad-name")
            }
            return asset(digest, request)
        }
        let queryStart = target.firstIndex(of: 0x3f) ?? target.count
        let path = target[..<queryStart]
        let isAppConfig = Bytes.equal(path, Self.appconfigPath)
        let isHealth = !isAppConfig && Bytes.equal(path, Self.healthPath)
        let isProbe = !isAppConfig && !isHealth && Readiness.isProbe(path)
        guard isAppConfig || isHealth || isProbe else { return HTTPResponse(notFound, note: "no-route") }
        guard request.method == .get || request.method == .head else { return refused(request, isHealthOrProbe: !isAppConfig) }
        if isHealth { return health() }
        if isProbe { return readiness.answer(path) { ready() } }
        return appconfig(query: target[min(queryStart + 1, target.count)...], request)
    }

    /// A method other than GET and HEAD: the CORS preflight on the asset and appconfig routes, 405 otherwise.
    private func refused(_ request: HTTPRequest, isHealthOrProbe: Bool) -> HTTPResponse {
        if request.method == .options && !isHealthOrProbe { return preflight(request) }
        return HTTPResponse(notAllowed, note: "-")
    }

    /// OPTIONS on the asset and appconfig routes: the CORS preflight a browser sends before a cross-origin GET
    /// with `If-None-Match` or `Range` (the contract's web client), or a plain OPTIONS.
    private func preflight(_ request: HTTPRequest) -> HTTPResponse {
        let isPreflight = request.headers["origin"] != nil && request.headers["access-control-request-method"] != nil
        return HTTPResponse(isPreflight && headers.allowOrigin != nil ? preflightAnswer : optionsAnswer, note: "options")
    }

    /// 200 while the blob folder is readable (503 otherwise); says "degraded" when index.json on disk is
    /// unusable and the last good index is being served.
    private func health() -> HTTPResponse {
        if let missing = folderMissing() { return missing }
        if let problem = appConfigs.refresh(lookNow: true) {
            return headers.uncacheable(200, "degraded: \(problem); serving the last good index\n")
        }
        return HTTPResponse(healthy, note: "-")
    }

    /// `/readyz` while not draining: 200 while the blob folder is there (503 otherwise). A degraded index still
    /// serves every blob, so it does not make the origin unready.
    private func ready() -> HTTPResponse { folderMissing() ?? HTTPResponse(healthy, note: "ready") }

    /// 503 when the blob folder cannot be reached now, nil when it can.
    private func folderMissing() -> HTTPResponse? {
        (try? FileStatus.of(path: package.assets.folder.path)) == nil ? headers.uncacheable(503, "package folder unavailable\n") : nil
    }

    /// The folder must exist, be readable and hold a readable pulse package index; returns its app configs.
    static func checkPackage(_ package: PublicFolder) throws -> [String: String] {
        let root = package.root.path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isFolder) else {
            throw OriginError("package folder \(root) does not exist")
        }
        guard isFolder.boolValue else { throw OriginError("\(root) is not a folder") }
        guard FileSystem.isAccessible(root, [.read, .search]) else { throw OriginError("no permission to read the package folder \(root)") }
        guard FileManager.default.fileExists(atPath: package.indexURL.path) else {
            throw OriginError("\(root) is not a pulse package (no index.json; build one with pulse-pack build)")
        }
        guard FileSystem.isAccessible(package.indexURL.path, .read) else {
            throw OriginError("no permission to read \(package.indexURL.path)")
        }
        let index: [String: String]
        do { index = try AppConfigStore.readIndex(package) } catch { throw OriginError("\(error)") }
        let assets = package.assets.folder.path
        if FileManager.default.fileExists(atPath: assets, isDirectory: &isFolder) {
            guard isFolder.boolValue, FileSystem.isAccessible(assets, [.read, .search]) else {
                throw OriginError("no permission to read the blob folder \(assets)")
            }
        }
        return index
    }
}
