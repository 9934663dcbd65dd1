import Foundation
import PulseCore
import PulseCrypto
import PulseStore
import PulseSystem

/// Where the package secret comes from: the 32 bytes every slide key is derived from.
///
/// In order: `--secret-file FILE` (created if missing), the environment variable `PULSE_PACKAGE_SECRET`
/// (base64), or the default home `$XDG_CONFIG_HOME/pulse-pack/secrets/<packageId>` (else
/// `$HOME/.config/pulse-pack/secrets/<packageId>`), created on the first build. Files hold the base64 text,
/// mode 0600 in 0700 folders. The secret is never inside the package folder, so copying or syncing the
/// folder never ships it.
public enum PackageSecret {
    public static let environmentVariable = "PULSE_PACKAGE_SECRET"

    /// The secret and where it came from.
    public struct Loaded {
        public let secret: SecretBytes
        /// A file path, or `$PULSE_PACKAGE_SECRET`.
        public let source: String
        /// True if this build created it (a new package, or a secret that was lost).
        public let created: Bool
    }

    /// The default secret file of a package: under `$XDG_CONFIG_HOME`, else `$HOME/.config`; nil without either.
    public static func defaultURL(packageId: PackageID, environment: [String: String]) -> URL? {
        let config: URL
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            config = URL(fileURLWithPath: xdg)
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            config = URL(fileURLWithPath: home).appendingPathComponent(".config")
        } else {
            return nil
        }
        return config.appendingPathComponent("pulse-pack/secrets").appendingPathComponent(packageId.hex)
    }

    /// Loads the secret, creating the file if it is missing.
    /// - Throws: `InputError` for a secret file inside the package folder, readable by others, or not
    ///   32 bytes of base64, or when there is no home for the default file.
    public static func load(file: URL?, environment: [String: String], packageId: PackageID, package: PulsePackage) throws -> Loaded {
        if file == nil, let text = environment[environmentVariable] {
            return Loaded(secret: try decode(text, source: "$\(environmentVariable)"), source: "$\(environmentVariable)", created: false)
        }
        let (url, what): (URL, String)
        if let file {
            (url, what) = (file, "--secret-file")
        } else {
            guard let home = defaultURL(packageId: packageId, environment: environment) else {
                throw InputError(file: package.root.path, "no place for the package secret: set XDG_CONFIG_HOME or HOME, or give --secret-file")
            }
            (url, what) = (home, "package secret")
        }
        if isInside(url, package.root) {
            throw InputError(file: url.path, "\(what) is inside the package folder, where a copy or sync of the folder would ship it; keep it elsewhere")
        }
        if FileManager.default.fileExists(atPath: url.path) { return Loaded(secret: try read(url, what: what), source: url.path, created: false) }
        let secret = try SecretBytes.random(count: SlideCipher.secretByteCount)
        let winner = try create(secret, at: url)
        return Loaded(secret: winner ?? secret, source: url.path, created: winner == nil)
    }

    /// Writes `secret` as a new file at `url` (0600, missing folders 0700) and never replaces one: if a
    /// file appeared meanwhile, returns the secret it holds instead.
    static func create(_ secret: SecretBytes, at url: URL) throws -> SecretBytes? {
        let folder = url.deletingLastPathComponent()
        try makePrivateFolders(folder)
        removeAbandonedStaging(in: folder, for: url.lastPathComponent)
        let created: Bool
        do throws(PathError) {
            created = try FileSystem.createNew(url.path, with: Array((secret.base64EncodedString() + "\n").utf8), mode: 0o600)
        } catch where error.path == url.path {
            throw StoreError.system(url.path, "cannot create the package secret", errno: error.errno)  // the link
        } catch {
            throw StoreError(error)  // the staged copy
        }
        return created ? nil : try read(url, what: "package secret")
    }

    /// Staging files of a build killed while it created the secret `secretName` (`.tmp-<name>-<uuid>`, or
    /// `.tmp-secret-…` from older builds; they hold a secret nobody uses): gone once an hour old, by then
    /// surely not another build's in progress.
    static func removeAbandonedStaging(in folder: URL, for secretName: String) {
        let manager = FileManager.default
        for name in (try? manager.contentsOfDirectory(atPath: folder.path)) ?? []
        where name.hasPrefix(".tmp-\(secretName)-") || (name.hasPrefix(".tmp-") && name.contains("secret")) {
            let path = folder.appendingPathComponent(name).path
            guard let modified = (try? manager.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
                  Date().timeIntervalSince(modified) > 3600 else { continue }
            try? FileSystem.remove(path)
        }
    }

    /// mkdir -p with 0700 for the folders it creates.
    static func makePrivateFolders(_ folder: URL) throws {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder) {
            guard isFolder.boolValue else { throw StoreError(path: folder.path, "exists and is not a folder") }
            return
        }
        try makePrivateFolders(folder.deletingLastPathComponent())
        do throws(PathError) { try FileSystem.makeFolder(folder.path, mode: 0o700) } catch {
            throw StoreError.system(folder.path, "cannot create folder", errno: error.errno)
        }
    }

    /// True if `url` is `folder` or inside it (symbolic links resolved as far as the path exists).
    static func isInside(_ url: URL, _ folder: URL) -> Bool {
        func resolved(_ url: URL) -> String {
            var existing = url.standardizedFileURL, rest: [String] = []
            while !FileManager.default.fileExists(atPath: existing.path), existing.path != "/" {
                rest.insert(existing.lastPathComponent, at: 0)
                existing = existing.deletingLastPathComponent()
            }
            var path = existing.resolvingSymlinksInPath().path
            for part in rest { path += (path.hasSuffix("/") ? "" : "/") + part }
            return path
        }
        let inner = resolved(url), outer = resolved(folder)
        return inner == outer || inner.hasPrefix(outer.hasSuffix("/") ? outer : outer + "/")
    }

    static func read(_ url: URL, what: String) throws -> SecretBytes {
        let info: FileInfo
        do throws(PathError) { info = try FileInfo.of(url.path) } catch { throw InputError(file: url.path, "\(what): \(error.errno)") }
        guard info.permissions & 0o077 == 0 else {
            throw InputError(file: url.path, "\(what) is readable by others (mode \(String(info.permissions & 0o777, radix: 8))); chmod 600 it")
        }
        let data = try InputLoader.readFile(url)
        return try decode(String(decoding: data, as: UTF8.self), source: url.path)
    }

    private static func decode(_ text: String, source: String) throws -> SecretBytes {
        guard let data = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)),
              data.count == SlideCipher.secretByteCount
        else {
            throw InputError(file: source, "a package secret is 32 bytes in base64")
        }
        return SecretBytes(data)
    }
}
