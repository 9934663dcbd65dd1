import Foundation
import PulseCore
import PulseStore

/// Checks on the output folder before a build writes anything to it.
enum PackageFolder {
    /// Entries a package folder may hold; anything else means the folder is something else.
    static let knownEntries: Set<String> = ["index.json", "assets", "sessions", "series", "appconfig", "keys", "secret", ".lock"]

    /// Creates the folder if needed; refuses a file, or a non-empty folder that is not a package
    /// (so a typo in `--out` never writes into someone's home folder).
    static func prepare(_ package: PulsePackage) throws {
        let path = package.root.path
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) {
            guard isFolder.boolValue else { throw InputError(file: path, "output exists and is not a folder") }
            let entries: [String]
            do { entries = try FileManager.default.contentsOfDirectory(atPath: path) } catch {
                throw StoreError(path: path, "cannot list the output folder (\(AtomicFile.reason(error)))")
            }
            if let stranger = entries.first(where: { !knownEntries.contains($0) && !$0.hasPrefix(".tmp-") }) {
                throw InputError(file: path, "output folder is not a pulse package (it holds \"\(stranger)\"); choose a new or empty folder")
            }
        } else {
            try AtomicFile.makeFolder(package.root)
        }
        guard access(path, W_OK) == 0 else { throw StoreError.system(path, "output folder is not writable", errno: errno) }
    }

    /// Deletes `.tmp-*` files left by a build that was killed (they are never referenced).
    static func removeUnfinishedWrites(_ package: PulsePackage) throws {
        let manager = FileManager.default
        var folders = [package.root, package.assets.folder, package.keysFolder]
        for kind in PulsePackage.Kind.allCases {
            let folder = package.root.appendingPathComponent(kind.rawValue)
            folders += ((try? manager.contentsOfDirectory(atPath: folder.path)) ?? []).map { folder.appendingPathComponent($0) }
        }
        let keyFolders = (try? manager.contentsOfDirectory(atPath: package.keysFolder.path)) ?? []
        folders += keyFolders.map { package.keysFolder.appendingPathComponent($0) }
        for folder in folders {
            for name in (try? manager.contentsOfDirectory(atPath: folder.path)) ?? [] where name.hasPrefix(".tmp-") {
                unlink(folder.appendingPathComponent(name).path)
            }
        }
    }
}
