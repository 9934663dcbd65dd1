import Foundation
import PulseTestSupport
import Testing

/// deploy/systemd/pulse-server-backup.service and the `systemd-run` recipes of docs/operations.md run as
/// pulse-server.service's own dynamic user. systemd chowns a `StateDirectory=` to the starting unit's user
/// (recursively) and sets its mode, so any other user or mode on `pulse-server`'s folder locks the running server
/// out of it (systemd.exec(5)); units naming the same dynamic user share it (src/core/dynamic-user.c). No systemd
/// runs here, so the settings are checked as written, and the backup unit's own commands are run.
@Suite struct BackupUnitTests {
    /// The values of `key=` in a unit (every line that sets it, in order).
    static func settings(_ unit: String, _ key: String) -> [String] {
        unit.replacingOccurrences(of: "\\\n", with: " ").split(separator: "\n")
            .filter { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
    }

    @Test func theBackupUnitRunsAsTheServersUserOnItsFolder() throws {
        let server = try DeployTests.unit("pulse-server.service"), backup = try DeployTests.unit("pulse-server-backup.service")
        for key in ["DynamicUser", "User", "Group", "StateDirectoryMode"] {
            #expect(Self.settings(server, key).count == 1 && Self.settings(server, key) == Self.settings(backup, key), "\(key)")
        }
        #expect(Self.settings(server, "User") == ["pulse-server"] && Self.settings(server, "StateDirectoryMode") == ["0700"])
        let folders = Self.settings(backup, "StateDirectory").flatMap { $0.split(separator: " ").map(String.init) }
        #expect(folders == ["pulse-server", "pulse-server-backups"] && Self.settings(server, "StateDirectory") == ["pulse-server"])
    }

    /// Every `systemd-run` on the operations page that names the server's state folder says the server's user,
    /// group and folder mode, and runs as a dynamic user (the recipes once had only the last, and the folder).
    @Test func theOperationsPageRecipesRunAsTheServersUser() throws {
        let page = try String(contentsOf: DeployTests.root.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        let commands = page.replacingOccurrences(of: "\\\n", with: " ").split(separator: "\n").filter { $0.contains("systemd-run ") }
        let onTheFolder = commands.filter { $0.contains("StateDirectory=pulse-server") || $0.contains(#"StateDirectory="pulse-server "#) }
        #expect(onTheFolder.count >= 3, "\(commands)")
        for command in onTheFolder {
            for setting in ["-p DynamicUser=yes", "-p User=pulse-server", "-p Group=pulse-server", "-p StateDirectoryMode=0700"] {
                #expect(command.contains(setting), "\(setting) missing from: \(command)")
            }
        }
    }

    /// The unit's `ExecStart` (its shell line, `%%` as systemd reads it) writes a backup `restore` takes; its
    /// `ExecStartPost` deletes the copies older than two days and keeps the rest.
    @Test func theBackupUnitsCommandsBackUpAndPrune() throws {
        let folder = try TestFolder()
        let data = folder.path("state/pulse-server"), backups = folder.path("state/pulse-server-backups")
        try FileManager.default.createDirectory(atPath: backups, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        #expect(CLI.run(["admin", "staff-token", "create", "--data", data]).code == 0)
        func local(_ text: String) -> String {
            text.replacingOccurrences(of: "/var/lib/pulse-server-backups", with: backups).replacingOccurrences(of: "/var/lib/pulse-server", with: data)
                .replacingOccurrences(of: "%%", with: "%")
        }
        let unit = try DeployTests.unit("pulse-server-backup.service")
        let start = try #require(Self.settings(unit, "ExecStart").first)
        let script = try #require(start.firstMatch(of: #/^/bin/sh -c '(.*)'$/#), "\(start)")
        let old = backups + "/pulse-server-20200101T000000Z.backup"
        #expect(FileManager.default.createFile(atPath: old, contents: Data("old".utf8)))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3 * 86_400)], ofItemAtPath: old)
        let ran = try DeployTests.run("/bin/sh", ["-c", local(String(script.1))])
        #expect(ran.status == 0, "\(ran.output)")
        let made = try FileManager.default.contentsOfDirectory(atPath: backups).filter { $0 != "pulse-server-20200101T000000Z.backup" }
        #expect(made.count == 1 && made[0].wholeMatch(of: #/pulse-server-\d{8}T\d{6}Z\.backup/#) != nil, "\(made)")

        let post = try #require(Self.settings(unit, "ExecStartPost").first).split(separator: " ").map { local(String($0)) }
        let pruned = try DeployTests.run(post[0], Array(post.dropFirst()))
        #expect(pruned.status == 0, "\(pruned.output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: backups) == made, "the old copy goes, the new one stays")
        #expect(CLI.run(["restore", "--from", backups + "/" + made[0], "--data", folder.path("restored")]).code == 0)
    }
}
