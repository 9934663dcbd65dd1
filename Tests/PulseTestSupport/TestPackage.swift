import Foundation
import PulseCore
import PulseCrypto
import PulseStore

/// A package folder in a `TestFolder` (removed when the package is released), written part by part as
/// docs/package-format.md describes it, for the tests of what reads a package rather than builds one:
/// - `publish(…)` (TestPackage+Published): a whole published package (both parts, indexes last) through
///   PulseStore's own writers, the ones `pulse-pack build` commits with — for push and gc;
/// - `addBlob`/`addAppConfig` (TestPackage+Public): the public part alone, as `pulse-pack push` leaves it
///   on a target — for the origin, which is given `publicRoot`;
/// - `addSession`/`addSeries`/`commit` (TestPackage+Server): the server part written by hand from the
///   spec, so that import is tested against the format rather than against the packager's code.
public final class TestPackage {
    public let folder: TestFolder
    public let packageId: PackageID
    /// The package folder (`public/`, `server/`).
    public var root: URL { folder.url }
    public var package: PulsePackage { PulsePackage(root: root) }
    /// The public part: what the origin serves and push copies.
    public var publicRoot: URL { package.publicRoot }
    /// The server part: what only `pulse-server import` reads.
    public var server: URL { package.serverRoot }

    /// The server part's index entries so far (written by `commit()`).
    public var sessions: [String: JSONValue] = [:]
    public var series: [String: JSONValue] = [:]
    /// The public part's app configs so far (slug → packageVersion, written by `writeIndex()`).
    public var appconfig: [String: String] = [:]

    /// An empty package with `packageId` (a random one by default) in a fresh folder named after `name`.
    public init(packageId: PackageID? = nil, _ name: String = #function) throws {
        folder = try TestFolder(name)
        self.packageId = try packageId ?? PackageID.random()
    }

    /// Hash of a slide text, the blob's name.
    public static func hash(_ text: String) -> Digest { Digest(of: Array(text.utf8)) }

    /// Random bytes of `count`.
    public static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    public func setModified(_ url: URL, _ date: Date) throws {
        try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: url.path)
    }
}
