import Foundation
import PulseStore
import PulseSystem

/// The device folder: everything one device keeps (docs/device.md, "The device folder").
///
/// ```
/// DIR/                      0700
///   device.json             0600  identity: server, device id, certificate, scope (written last by enroll: the commit point)
///   device-key.pem          0600  the P-256 key (FileDeviceKey), never replaced
///   cache.json              0600  the cache's commit point: each cached manifest's file and ETag
///   answers.json            0600  signed answers: trusted answer keys, highest accepted seq per request, server time seen
///   manifests/<sha256>      0600  manifests exactly as served, named by the SHA-256 of their bytes
///   blobs/<sha256>          0444  assets exactly as served (slide ciphertext, public images), verified
///   partial/<sha256>        0600  a download in progress; partial/<sha256>.etag its validator for If-Range
///   .lock                   flock held by a sync
/// ```
public struct DeviceFolder: Sendable {
    public let url: URL
    public var path: String { url.path }

    public var identityURL: URL { url.appendingPathComponent("device.json") }
    public var keyPath: String { url.appendingPathComponent(FileDeviceKey.fileName).path }
    public var cacheURL: URL { url.appendingPathComponent("cache.json") }
    public var answersURL: URL { url.appendingPathComponent("answers.json") }
    public var manifestsURL: URL { url.appendingPathComponent("manifests") }
    public var blobsURL: URL { url.appendingPathComponent("blobs") }
    public var partialURL: URL { url.appendingPathComponent("partial") }
    var lockPath: String { url.appendingPathComponent(".lock").path }

    public init(url: URL) { self.url = url.standardizedFileURL }

    /// The folder at `path`, checked (0700, ours). With `create`, a missing folder is made 0700.
    public static func open(_ path: String, create: Bool = false) throws -> DeviceFolder {
        let folder = DeviceFolder(url: URL(fileURLWithPath: path))
        var isFolder: ObjCBool = false
        if !FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder) {
            guard create else {
                throw DeviceError(.deviceFolder, "\(folder.path) does not exist: enroll first (pulse-device enroll --device-dir \(path) …)")
            }
            do {
                try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw DeviceError(.storage, "\(folder.path): cannot create the device folder: \(Errno.describe(error))")
            }
        } else if !isFolder.boolValue {
            throw DeviceError(.deviceFolder, "\(folder.path) is not a folder")
        }
        try checkPrivate(folder.path, isFolder: true)
        return folder
    }

    /// Refuses a path that group or others may read, that another user owns, or that is a symbolic link.
    static func checkPrivate(_ path: String, isFolder: Bool) throws {
        let info: FileInfo
        do throws(PathError) { info = try FileInfo.ofLink(path) } catch {
            throw DeviceError(.deviceFolder, "\(path): cannot inspect: \(error.errno)")
        }
        guard info.kind == (isFolder ? .folder : .regular) else {
            throw DeviceError(.deviceFolder, "\(path): expected a \(isFolder ? "folder" : "regular file") (symbolic links are refused)")
        }
        let mode = info.permissions & 0o777
        if mode & 0o077 != 0 {
            throw DeviceError(.deviceFolder,
                "\(path) is open to group or others (mode 0\(String(mode, radix: 8))): run chmod \(isFolder ? "700" : "600") \(path)")
        }
        if info.owner != SystemProcess.effectiveUserID {
            throw DeviceError(.deviceFolder, "\(path) belongs to uid \(info.owner), not to uid \(SystemProcess.effectiveUserID) running pulse-device")
        }
    }

    /// True when `device.json` exists.
    public var isEnrolled: Bool { FileManager.default.fileExists(atPath: identityURL.path) }

    /// The enrolled identity.
    public func identity() throws -> DeviceIdentity {
        guard isEnrolled else {
            throw DeviceError(.deviceFolder, "\(path) holds no enrolled device: run pulse-device enroll --device-dir \(path) first")
        }
        try Self.checkPrivate(identityURL.path, isFolder: false)
        return try DeviceIdentity.read(identityURL)
    }

    /// The device key (`device-key.pem`).
    public func key() throws -> FileDeviceKey { try FileDeviceKey.load(at: keyPath) }

    /// Creates the cache's folders (0700) when missing.
    func makeCacheFolders() throws {
        for folder in [manifestsURL, blobsURL, partialURL] {
            do { try AtomicFile.makeFolder(folder, mode: 0o700) } catch { throw DeviceError(.storage, "\(error)") }
        }
    }

    /// Takes the folder's lock (flock on `.lock`), waiting up to `patience` seconds for another sync.
    func lock(patience: Double = 120) throws -> FolderLock {
        try FolderLock(path: lockPath, patience: patience)
    }
}

/// An exclusive flock, released when dropped (or when the process dies, also by `kill -9`).
final class FolderLock {
    private let lock: FileLock

    init(path: String, patience: Double) throws {
        let file: File
        do throws(PathError) { file = try File.open(path, .readWrite, creatingWith: 0o600) } catch {
            throw DeviceError(.storage, "\(path): cannot create the lock file: \(error.errno)")
        }
        guard let lock = try? FileLock.acquire(file, wait: .seconds(patience)) else {
            throw DeviceError(.storage, "another pulse-device has held \(path) for \(Int(patience)) s; is a sync stuck?")
        }
        self.lock = lock
    }
}
