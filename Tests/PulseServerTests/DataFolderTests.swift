import Foundation
import PulseServer
import PulseTestSupport
import SyncTestSupport
import PulseServerStorage
import Testing

@Suite struct DataFolderTests {
    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test func createsAPrivateFolderAndPrivateDatabaseFiles() throws {
        let parent = try TestFolder()
        let path = parent.url.appendingPathComponent("nested/data").path
        let folder = try DataFolder.prepare(path)
        let storage = try folder.openStorage()
        try TestContent.seed(storage, "talk")  // writes, so -wal and -shm exist
        #expect(try Self.mode(path) == 0o700)
        for file in [folder.databasePath, folder.databasePath + "-wal", folder.databasePath + "-shm"] {
            #expect(try Self.mode(file) == 0o600, "\(file)")
        }
        withExtendedLifetime(storage) {}
    }

    @Test func refusesLoosePermissionsNamingTheFileAndTheFix() throws {
        let parent = try TestFolder()
        let path = parent.url.appendingPathComponent("data").path
        let folder = try DataFolder.prepare(path)
        _ = try folder.openStorage()

        chmod(path, 0o750)
        #expect(throws: ServerError(.unsafeFile, "\(path) is open to group or others (mode 0750); refusing to start: run chmod 700 \(path)")) {
            try DataFolder.prepare(path)
        }
        chmod(path, 0o700)
        chmod(folder.databasePath, 0o644)
        #expect(throws: ServerError(.unsafeFile,
            "\(folder.databasePath) is open to group or others (mode 0644); refusing to start: run chmod 600 \(folder.databasePath)")) {
            try DataFolder.prepare(path)
        }
        chmod(folder.databasePath, 0o600)
        _ = FileManager.default.createFile(atPath: folder.certificateKeyPath, contents: Data(), attributes: [.posixPermissions: 0o640])
        #expect(throws: ServerError.self) { try DataFolder.prepare(path) }
        chmod(folder.certificateKeyPath, 0o600)
        #expect(try DataFolder.prepare(path).url.path == path)
    }

    @Test func aLooseWALFileIsRefusedToo() throws {
        let parent = try TestFolder()
        let folder = try DataFolder.prepare(parent.url.appendingPathComponent("data").path)
        let storage = try folder.openStorage()
        try TestContent.seed(storage, "talk")
        chmod(folder.databasePath + "-wal", 0o604)
        let error = #expect(throws: ServerError.self) { try DataFolder.prepare(folder.url.path) }
        #expect(error?.message.contains("-wal is open to group or others (mode 0604)") == true)
        withExtendedLifetime(storage) {}
    }

    @Test func symbolicLinksAndNonFoldersAreRefused() throws {
        let parent = try TestFolder()
        let path = parent.url.appendingPathComponent("data").path
        let folder = try DataFolder.prepare(path)
        try FileManager.default.removeItem(atPath: folder.databasePath)
        let elsewhere = parent.url.appendingPathComponent("elsewhere.sqlite").path
        _ = FileManager.default.createFile(atPath: elsewhere, contents: Data(), attributes: [.posixPermissions: 0o600])
        try FileManager.default.createSymbolicLink(atPath: folder.databasePath, withDestinationPath: elsewhere)
        let error = #expect(throws: ServerError.self) { try DataFolder.prepare(path) }
        #expect(error?.message == "\(folder.databasePath): expected a regular file (symbolic links are refused)")

        let file = parent.url.appendingPathComponent("file").path
        _ = FileManager.default.createFile(atPath: file, contents: Data())
        #expect(throws: ServerError(.unsafeFile, "\(file): not a folder")) { try DataFolder.prepare(file) }
    }

    @Test func aRestartKeepsDevicesStateAndFrontier() throws {
        let parent = try TestFolder()
        let path = parent.url.appendingPathComponent("data").path
        var device: DeviceRecord?
        do {
            let storage = try DataFolder.prepare(path).openStorage()
            try TestContent.seed(storage, "talk")
            device = try storage.enroll(credentialHash: try StorageSuiteEnrollTests.code(storage), device: StorageSuiteEnrollTests.device(1), at: 1100)
            _ = try storage.updateSession(id: "talk", SessionUpdate(state: .live, maxShown: 5, allowDownload: true), at: 1200)
        }
        let reopened = try DataFolder.prepare(path).openStorage()
        #expect(try reopened.device(id: try #require(device).id) == device)
        let session = try #require(try reopened.session(id: "talk"))
        #expect(session.state == .live && session.maxShown == 5 && session.allowDownload)
        #expect(try reopened.changes(sessionId: "talk", after: 0, limit: 10).count == 4)
    }
}
