import Foundation
import PulseStore
import PulseSystem

/// A push target on a file system: a mounted origin folder or the source folder of an rsync.
/// Every file is written atomically (temp file, fsync, rename, fsync of the folder), blobs 0444.
public struct FolderTarget: PushTarget {
    public let root: URL
    /// Writes a file atomically; replaceable so tests can inject a full disk.
    let writeFile: @Sendable (Data, URL, mode_t) throws -> Void

    public init(root: URL) {
        self.init(root: root, writeFile: { data, url, mode in try AtomicFile.write(data, to: url, mode: mode) })
    }

    init(root: URL, writeFile: @escaping @Sendable (Data, URL, mode_t) throws -> Void) {
        self.root = root.standardizedFileURL
        self.writeFile = writeFile
    }

    public var displayName: String { root.path }

    func url(_ path: String) -> URL { root.appendingPathComponent(path) }

    public func prepare() throws {
        try Self.makeFolders(root)
        do throws(PathError) { try FileSystem.checkAccess(root.path, .write) } catch {
            throw StoreError.system(root.path, "not writable", errno: error.errno)
        }
    }

    public func size(of path: String) throws -> Int? {
        let info: FileInfo
        do throws(PathError) { info = try FileInfo.of(url(path).path) } catch {
            if error.errno == .noSuchFile || error.errno == .notFolder { return nil }
            throw StoreError(error)
        }
        return info.isRegularFile ? info.size : nil
    }

    public func read(_ path: String) throws -> Data? {
        guard try size(of: path) != nil else { return nil }
        do { return try Data(contentsOf: url(path)) } catch {
            throw StoreError(path: url(path).path, "cannot read: \(OpsError.reason(error))")
        }
    }

    public func write(_ path: String, data: Data, kind: PublishedKind) throws {
        let destination = url(path)
        try Self.makeFolders(destination.deletingLastPathComponent())
        try writeFile(data, destination, kind.isBlob ? 0o444 : 0o644)
    }

    public func list(under prefix: String) throws -> [TargetObject] {
        let start = url(prefix)
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: start.path, isDirectory: &isFolder), isFolder.boolValue else { return [] }
        // A folder that cannot be read stops the listing: gc must never take a partial one for the whole.
        var failure: (URL, any Error)?
        guard let enumerator = FileManager.default.enumerator(
            at: start, includingPropertiesForKeys: [.isRegularFileKey, .fileSizeKey, .contentModificationDateKey],
            errorHandler: { url, error in failure = (url, error); return false })
        else { throw StoreError(path: start.path, "cannot list") }
        var objects: [TargetObject] = []
        let rootPath = root.path.hasSuffix("/") ? root.path : root.path + "/"
        for case let file as URL in enumerator {
            let values: URLResourceValues
            do { values = try file.resourceValues(forKeys: [.isRegularFileKey, .fileSizeKey, .contentModificationDateKey]) } catch {
                // Gone since the folder was read (a temp file renamed into place): not there any more.
                if (error as NSError).code == NSFileReadNoSuchFileError { continue }
                throw StoreError(path: file.path, "cannot list: \(OpsError.reason(error))")
            }
            guard values.isRegularFile == true else { continue }
            let full = file.standardizedFileURL.path
            guard full.hasPrefix(rootPath) else { continue }
            objects.append(TargetObject(
                path: String(full.dropFirst(rootPath.count)), size: values.fileSize ?? 0,
                modified: values.contentModificationDate ?? .distantPast))
        }
        if let (url, error) = failure { throw StoreError(path: url.path, "cannot list: \(OpsError.reason(error))") }
        return objects.sorted { $0.path < $1.path }
    }

    /// mkdir -p with the system's reason on failure ("Read-only file system", "Permission denied").
    static func makeFolders(_ url: URL) throws {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) {
            guard isFolder.boolValue else { throw StoreError(path: url.path, "exists and is not a folder") }
            return
        }
        let parent = url.deletingLastPathComponent()
        if parent.path != url.path { try makeFolders(parent) }
        do throws(PathError) { try FileSystem.makeFolder(url.path, mode: 0o755) } catch {
            throw StoreError.system(url.path, "cannot create folder", errno: error.errno)
        }
    }

    public func delete(_ path: String) throws {
        do throws(PathError) { try FileSystem.removeIfPresent(url(path).path) } catch {
            throw StoreError.system(url(path).path, "cannot delete", errno: error.errno)
        }
    }

    public func acquireLease(for operation: String, wait: TimeInterval) throws -> any TargetLease {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root.path, isDirectory: &isFolder), isFolder.boolValue else {
            throw OpsError(.badInput, root.path, "no such folder")
        }
        return try FolderLease.acquire(root: root, operation: operation, wait: wait)
    }
}
