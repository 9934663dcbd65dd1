import Foundation
import PulseCrypto
@testable import PulseOrigin

/// A pushed folder (the public part of a package) in a temp dir, written by hand: blobs in assets/,
/// index.json (`pulse-public/1`), appconfig files.
final class TestPackage {
    let root: URL
    var appconfig: [String: String] = [:]

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("pulse-origin-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("assets"), withIntermediateDirectories: true)
        try writeIndex()
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    var assets: URL { root.appendingPathComponent("assets") }

    /// Stores `bytes` as a blob and returns its name.
    @discardableResult
    func addBlob(_ bytes: [UInt8]) throws -> String {
        let hash = SHA256.hex(bytes)
        try Data(bytes).write(to: assets.appendingPathComponent(hash))
        return hash
    }

    /// Random bytes of `count`.
    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// Flips one bit of blob `hash` in place, keeping its name (bumps mtime so the identity changes).
    func flipBit(_ hash: String, at offset: Int = 0) throws {
        let url = assets.appendingPathComponent(hash)
        var bytes = try [UInt8](Data(contentsOf: url))
        bytes[offset] ^= 0x01
        try FileManager.default.removeItem(at: url)
        try Data(bytes).write(to: url)
    }

    /// Publishes an app config for `slug` (file appconfig/<slug>/<packageVersion>.json, then index.json).
    @discardableResult
    func addAppConfig(_ slug: String, json: String) throws -> String {
        let version = SHA256.hex(Array(json.utf8))
        let folder = root.appendingPathComponent("appconfig").appendingPathComponent(slug)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(json.utf8).write(to: folder.appendingPathComponent("\(version).json"))
        appconfig[slug] = version
        try writeIndex()
        return version
    }

    /// index.json, replaced atomically (temp file + rename) as pulse-pack build does.
    func writeIndex() throws {
        let entries = appconfig.keys.sorted().map { "\"\($0)\": { \"packageVersion\": \"\(appconfig[$0]!)\" }" }
        let text = "{ \"format\": \"pulse-public/1\", \"packageId\": \"0123456789abcdef0123456789abcdef\", "
            + "\"appconfig\": { \(entries.joined(separator: ", ")) }, \"history\": {} }\n"
        let temp = root.appendingPathComponent(".tmp-index-\(UUID().uuidString)")
        try Data(text.utf8).write(to: temp)
        guard rename(temp.path, root.appendingPathComponent("index.json").path) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    /// An origin for this package (in process, no access log).
    func origin(
        _ configure: (inout OriginConfiguration) -> Void = { _ in }, alarms: AlarmLog = AlarmLog(),
        willHash: (@Sendable () -> Void)? = nil
    ) throws -> Origin {
        var configuration = OriginConfiguration(packageRoot: root)
        configure(&configuration)
        return try Origin(configuration: configuration, accessLog: nil, alarm: { alarms.append($0) }, willHash: willHash)
    }

    /// Returns once the kernel's clock for file times has moved past `time` (it ticks every few milliseconds), so
    /// that a change made next gets a later change time: creates a scratch file until its change time is later.
    static func waitForClockTick(after time: timespec) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tick-\(UUID().uuidString)").path
        defer { unlink(scratch) }
        for _ in 0..<10_000 {
            let fd = open(scratch, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
            _ = write(fd, "x", 1)
            close(fd)
            var info = stat()
            stat(scratch, &info)
            if info.st_ctim.tv_sec > time.tv_sec || (info.st_ctim.tv_sec == time.tv_sec && info.st_ctim.tv_nsec > time.tv_nsec) { return }
            usleep(500)
        }
        throw CocoaError(.fileWriteUnknown)
    }
}

/// Collects the origin's loud messages.
final class AlarmLog: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []
    func append(_ message: String) { lock.withLock { messages.append(message) } }
    var all: [String] { lock.withLock { messages } }
}
