import Foundation
import PulseServerStorage
import PulseSystem

/// The server's one data folder: the SQLite database (with its `-wal` and `-shm`) and the device
/// certificate signing key. The folder is 0700 and every file 0600; pulse-server refuses to start
/// when any of them is open to group or others, or belongs to another user, and says what to run.
public struct DataFolder: Sendable {
    public static let databaseName = "pulse-server.sqlite"
    public static let certificateKeyName = "device-cert-key.pem"
    /// The first answer-signing key (issue 21), adopted into the database's `answer_keys` when it holds none.
    public static let answerKeyName = "answer-key.pem"

    public let url: URL
    public var databasePath: String { url.appendingPathComponent(Self.databaseName).path }
    public var certificateKeyPath: String { url.appendingPathComponent(Self.certificateKeyName).path }
    public var answerKeyPath: String { url.appendingPathComponent(Self.answerKeyName).path }

    /// Every file that holds secrets or state, checked at every start.
    var files: [String] {
        [databasePath, databasePath + "-wal", databasePath + "-shm", certificateKeyPath, answerKeyPath, lockPath]
    }

    /// Opens the folder at `path`, creating it (0700) when missing, then checks every permission and
    /// creates the database file 0600 before SQLite first opens it (SQLite gives `-wal` and `-shm`
    /// the database file's mode).
    /// - Throws: `ServerError` (`.unsafeFile` for loose permissions or a foreign owner).
    public static func prepare(_ path: String) throws -> DataFolder {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        var isFolder: ObjCBool = false
        if !FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) {
            do {
                try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw ServerError(.storage, "\(url.path): cannot create the data folder: \((error as NSError).localizedDescription)")
            }
        } else if !isFolder.boolValue {
            throw ServerError(.unsafeFile, "\(url.path): not a folder")
        }
        let folder = DataFolder(url: url)
        try folder.checkPermissions()
        try folder.createPrivately(folder.databasePath)
        return folder
    }

    init(url: URL) { self.url = url }

    /// The folder at `path` as it is, creating nothing: for commands that only read it (`backup`).
    /// - Throws: `ServerError` (`.notFound` when there is no folder, `.unsafeFile` for loose permissions).
    public static func existing(_ path: String) throws -> DataFolder {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
            throw ServerError(.notFound, "\(url.path): no such data folder")
        }
        guard isFolder.boolValue else { throw ServerError(.unsafeFile, "\(url.path): not a folder") }
        let folder = DataFolder(url: url)
        try folder.checkPermissions()
        return folder
    }

    /// Refuses group/other access or a foreign owner on the folder and each file that exists.
    public func checkPermissions() throws {
        try check(url.resolvingSymlinksInPath().path, shown: url.path, isFolder: true)
        for file in files where FileManager.default.fileExists(atPath: file) {
            try check(file, shown: file, isFolder: false)
        }
    }

    private func check(_ path: String, shown: String, isFolder: Bool) throws {
        let attributes: [FileAttributeKey: Any]
        do { attributes = try FileManager.default.attributesOfItem(atPath: path) } catch {
            throw ServerError(.storage, "\(shown): cannot inspect: \((error as NSError).localizedDescription)")
        }
        let type = attributes[.type] as? FileAttributeType
        guard type == (isFolder ? .typeDirectory : .typeRegular) else {
            throw ServerError(.unsafeFile, "\(shown): expected a \(isFolder ? "folder" : "regular file") (symbolic links are refused)")
        }
        let mode = (attributes[.posixPermissions] as? Int) ?? 0o777
        if mode & 0o077 != 0 {
            let wanted = isFolder ? "700" : "600"
            throw ServerError(.unsafeFile,
                "\(shown) is open to group or others (mode 0\(String(mode, radix: 8))); refusing to start: run chmod \(wanted) \(shown)")
        }
        if let owner = (attributes[.ownerAccountID] as? NSNumber)?.uint32Value, owner != SystemProcess.effectiveUserID {
            throw ServerError(.unsafeFile, "\(shown) belongs to uid \(owner), pulse-server runs as uid \(SystemProcess.effectiveUserID); refusing to start")
        }
    }

    /// Creates `path` empty with mode 0600 unless it exists (never following a symbolic link).
    func createPrivately(_ path: String) throws {
        do throws(PathError) { _ = try File.createNew(path, mode: 0o600) } catch where error.errno != .exists {
            throw ServerError(.storage, "\(path): cannot create: \(error.errno)")
        } catch {}
    }

    /// The storage in this folder, migrated to the current schema.
    public func openStorage(connections: Int = 8) throws -> SQLiteStorage {
        let storage = try SQLiteStorage(path: databasePath, connections: connections)
        try checkPermissions()  // -wal and -shm exist now: check them too
        return storage
    }
}
