import Foundation
import PulseCore
import PulseStore
import PulseSystem

/// Checks on the output folder before a build writes anything to it.
enum PackageFolder {
    /// Creates the folder if needed; refuses a file, or a non-empty folder that is not a package
    /// (so a typo in `--out` never writes into someone's home folder).
    static func prepare(_ package: PulsePackage) throws {
        let path = package.root.path
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue {
            throw InputError(file: path, "output exists and is not a folder")
        }
        switch try package.layout() {
        case .missing: try AtomicFile.makeFolder(package.root)
        case .empty, .current, .legacy: break
        case let .foreign(stranger):
            throw InputError(file: path, "output folder is not a pulse package (it holds \"\(stranger)\"); choose a new or empty folder")
        }
        do throws(PathError) { try FileSystem.checkAccess(path, .write) } catch {
            throw StoreError.system(path, "output folder is not writable", errno: error.errno)
        }
    }

    /// Deletes `.tmp-*` files left by a build that was killed (they are never referenced).
    static func removeUnfinishedWrites(_ package: PulsePackage) throws {
        let manager = FileManager.default
        let subfolders = { (folder: URL) in
            ((try? manager.contentsOfDirectory(atPath: folder.path)) ?? []).map { folder.appendingPathComponent($0) }
        }
        var folders = [package.root, package.publicRoot, package.serverRoot, package.assets.folder, package.refsFolder,
                       package.keysFolder, package.gatedFolder]
        for kind in PulsePackage.Kind.allCases { folders += subfolders(package.kindFolder(kind)) }
        folders += subfolders(package.keysFolder) + subfolders(package.gatedFolder)
        for folder in folders {
            for name in (try? manager.contentsOfDirectory(atPath: folder.path)) ?? [] where name.hasPrefix(".tmp-") {
                try? FileSystem.remove(folder.appendingPathComponent(name).path)
            }
        }
    }
}
