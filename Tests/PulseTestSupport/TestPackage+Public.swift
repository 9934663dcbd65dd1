import Foundation
import PulseCore
import PulseCrypto
import PulseStore

/// The public part alone, as `pulse-pack push` leaves it on a target: blobs in `assets/`, app config files,
/// `index.json` (`pulse-public/1`) replaced atomically by PulseStore's writer, as a build does. Serve it
/// from `publicRoot`.
extension TestPackage {
    /// An empty public part: `assets/` and an index naming nothing.
    public static func publicPart(_ name: String = #function) throws -> TestPackage {
        let package = try TestPackage(name)
        try FileManager.default.createDirectory(at: package.assets, withIntermediateDirectories: true)
        try package.writeIndex()
        return package
    }

    /// The public part's blob folder.
    public var assets: URL { publicRoot.appendingPathComponent("assets") }

    /// Stores `bytes` as a blob and returns its name.
    @discardableResult
    public func addBlob(_ bytes: [UInt8]) throws -> String {
        let hash = SHA256.hex(bytes)
        try Data(bytes).write(to: assets.appendingPathComponent(hash))
        return hash
    }

    /// Flips one bit of blob `hash` in place, keeping its name (bumps mtime so the identity changes).
    public func flipBit(_ hash: String, at offset: Int = 0) throws {
        let url = assets.appendingPathComponent(hash)
        var bytes = try [UInt8](Data(contentsOf: url))
        bytes[offset] ^= 0x01
        try FileManager.default.removeItem(at: url)
        try Data(bytes).write(to: url)
    }

    /// Publishes an app config for `slug` (file appconfig/<slug>/<packageVersion>.json, then index.json).
    @discardableResult
    public func addAppConfig(_ slug: String, json: String) throws -> String {
        let version = SHA256.hex(Array(json.utf8))
        let folder = publicRoot.appendingPathComponent("appconfig").appendingPathComponent(slug)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(json.utf8).write(to: folder.appendingPathComponent("\(version).json"))
        appconfig[slug] = version
        try writeIndex()
        return version
    }

    /// `index.json` naming the app configs added so far, replaced atomically.
    public func writeIndex() throws {
        try package.publicPart.writeIndex(PublicIndex(packageId: packageId, appconfig: appconfig.mapValues { .init(packageVersion: $0) }))
    }
}
