import Foundation

/// A temporary folder (0700), removed with everything in it when the last reference goes: the one
/// temp-folder helper of the tests. Keep it in a `let` for as long as the test uses the folder.
public final class TestFolder: Sendable {
    public let url: URL

    public init(_ name: String = #function) throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("pulse-test-\(name.filter { $0.isLetter }.prefix(40))-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    public func path(_ relative: String) -> String { url.appendingPathComponent(relative).path }
}

/// Polls `condition` every 5 ms until it holds or `seconds` pass; the last answer.
public func eventually(within seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        usleep(5_000)
    }
    return try condition()
}
