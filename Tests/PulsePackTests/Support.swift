import Foundation
import PulseCommandLine
import PulseCore
import PulseStore

@testable import PulsePack
@testable import PulsePackCLI

/// Paths and helpers shared by the packager tests.
enum Support {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardizedFileURL
    static let samples = repository.appendingPathComponent("Samples")
    static let fixtures = repository.appendingPathComponent("Tests/Fixtures")
    static let keynotePDF = samples.appendingPathComponent("decks/keynote.pdf")
    static let keynoteImages = samples.appendingPathComponent("decks/keynote-images")

    /// Where the tests' builds keep package secrets by default (never the real user's config folder): one folder
    /// for the whole test run (a static is never released, so it stays until the process ends, as before).
    static let configFolder = try! TestFolder("configHome")
    static var configHome: URL { configFolder.url }

    /// The environment builds and the CLI see: the real one, with the secret home moved to `configHome`
    /// and no secret from the environment.
    static var environment: [String: String] {
        var variables = ProcessInfo.processInfo.environment
        variables["XDG_CONFIG_HOME"] = configHome.path
        variables["PULSE_PACKAGE_SECRET"] = nil
        variables["SOURCE_DATE_EPOCH"] = nil
        return variables
    }

    /// A fixed package id, for builds that must compare byte for byte.
    static let packageId = "0123456789abcdef0123456789abcdef"
    static let packageID = PackageID(packageId)!

    /// A secret file (0600) so that builds into different folders are comparable.
    static func secretFile(in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent("package.secret")
        try AtomicFile.write(Array("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n".utf8), to: url, mode: 0o600)
        return url
    }

    /// A minimal valid session file whose deck is `deck`.
    static func sessionFile(
        in folder: URL, deck: URL, id: String = "talk", extra: String = "", agenda: String = "[]", speakers: String = "[]",
        branding: String = ##"{ "primaryColor": "#112233", "accentColor": "#445566", "theme": "dark" }"##
    ) throws -> URL {
        let url = folder.appendingPathComponent("session-\(UUID().uuidString.prefix(6)).json")
        let text = """
            { "id": "\(id)", "title": "Test talk", "startsAt": "2026-12-03T09:00:00+01:00",
              "endsAt": "2026-12-03T10:00:00+01:00", "deck": "\(deck.path)", "agenda": \(agenda), "speakers": \(speakers),
              "branding": \(branding)\(extra) }
            """
        try Data(text.utf8).write(to: url)
        return url
    }

    /// Copies a folder (for decks the test will change).
    static func copy(_ source: URL, to destination: URL) throws -> URL {
        try FileManager.default.copyItem(at: source, to: destination)
        return destination
    }

    @discardableResult
    static func build(
        _ input: URL, out: URL, deck: URL? = nil, secret: URL? = nil, packageId: PackageID? = nil,
        environment extra: [String: String] = [:], sealTo: [String] = []
    ) throws -> BuildReport {
        var options = Builder.Options(input: input, output: out, environment: environment.merging(extra) { $1 })
        options.deck = deck
        options.secretFile = secret
        options.packageId = packageId
        options.sealTo = sealTo
        return try Builder(options: options).run()
    }

    /// The package's secret file in `configHome`.
    static func secretURL(_ out: URL) throws -> URL {
        let id = try PulsePackage(root: out).readIndex().packageId
        return try #require(PackageSecret.defaultURL(packageId: id, environment: environment))
    }

    /// Every file of a folder (relative path → bytes), the lock file aside: to prove a folder unchanged.
    static func snapshot(_ folder: URL) -> [String: Data] {
        var files: [String: Data] = [:]
        guard let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey]) else { return files }
        for case let url as URL in enumerator where (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true {
            let relative = String(url.standardizedFileURL.path.dropFirst(folder.standardizedFileURL.path.count + 1))
            if relative != ".lock" { files[relative] = FileManager.default.contents(atPath: url.path) }
        }
        return files
    }

    /// Runs the CLI in process, capturing its output.
    static func cli(_ arguments: [String]) -> (code: Int32, out: [String], err: [String]) {
        let capture = Capture()
        let console = Console(out: { capture.add(out: $0) }, err: { capture.add(err: $0) })
        let code = PulsePackCLI.main(arguments, console: console, environment: environment)
        return (code, capture.out, capture.err)
    }

    /// Runs a program (by default the built `pulse-pack`, through which push and gc pass to
    /// `pulse-pack-ops`) and waits, capturing its output lines.
    static func executable(_ arguments: [String], program: URL = binary) throws -> (code: Int32, out: [String], err: [String]) {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try runRetryingWhileBusy(process)
        // Both pipes at once: a child blocked on a full stderr pipe would never close stdout.
        let capture = Capture()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n").forEach { capture.add(err: String($0)) }
        }
        String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n").forEach { capture.add(out: String($0)) }
        group.wait()
        process.waitUntilExit()
        return (process.terminationStatus, capture.out, capture.err)
    }

    /// Starts `process`, retrying for a moment on ETXTBSY: a program this test process has just written (a
    /// copied executable) stays "busy" while any child spawned meanwhile by another test still holds the
    /// copy's write descriptor, until that child's `exec`.
    static func runRetryingWhileBusy(_ process: Process) throws {
        for attempt in 1... {
            do { return try process.run() } catch let error as NSError where error.domain == NSPOSIXErrorDomain && error.code == Int(ETXTBSY) && attempt < 100 {
                usleep(20_000)
            }
        }
    }

    /// Runs a program and waits; returns its exit status.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// The current session manifest of a package.
    static func manifest(_ out: URL, session: String = "talk") throws -> JSONValue {
        let package = PulsePackage(root: out)
        let entry = try #require(try package.readIndex().sessions[session])
        return try package.readManifest(.sessions, id: session, packageVersion: entry.packageVersion)
    }
}

final class Capture: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var out: [String] = []
    private(set) var err: [String] = []
    func add(out line: String) { lock.withLock { out.append(line) } }
    func add(err line: String) { lock.withLock { err.append(line) } }
}

import PulseTestSupport
import Testing
