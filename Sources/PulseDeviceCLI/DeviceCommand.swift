import Foundation
import PulseCommandLine
import PulseCore
import PulseDevice
import PulseSystem

/// `pulse-device`: the reference app client on the command line, declared once (parsing, help, run).
/// Every subcommand is a thin layer over the library types an app would embed (`Enrollment`, `Syncer`,
/// `ReleasedKeys`, `Watcher`).
public enum DeviceCommand {
    public static func root(console: Console) -> Command {
        Command(
            name: "pulse-device",
            abstract: "The reference app client of the mobile contract: enroll, pre-cache, fetch released keys, open slides, follow the live session.",
            discussion: """
                One device lives in one folder (--device-dir, or $PULSE_DEVICE_DIR): its P-256 key (0600), its identity
                and certificate, and its cache (manifests and ciphertext exactly as served). Slides are decrypted in
                memory only; plaintext goes only where --out says. Exit codes: 0 ok, 64 usage, 65 a device folder or an
                argument that cannot be used, 1 anything else (the server refused, the network, a slide not released).
                See docs/device.md.
                """,
            subcommands: [
                enrollCommand(console: console), syncCommand(console: console), keysCommand(console: console),
                openCommand(console: console), watchCommand(console: console), statusCommand(console: console),
                diagCommand(console: console),
            ])
    }

    /// Runs the CLI with `arguments` (without the program name); returns the exit code.
    public static func main(_ arguments: [String], console: Console = .standard()) -> Int32 {
        CommandLineTool.main(
            root(console: console), arguments: arguments,
            errorHandler: { error in
                console.err("pulse-device: error: \(error)")
                return (error as? DeviceError)?.exitCode ?? ExitCode.failure
            },
            print: console.out, printError: console.err)
    }

    // MARK: Shared options

    static let deviceDirOption = Option.value("device-dir", "<dir>", help: "The device folder (default $PULSE_DEVICE_DIR).")
    static let serverOption = Option.value("server", "<url>", help: "The sync server's base URL (default: the one the device enrolled with).")
    static let jsonOption = Option.flag("json", help: "Print JSON (one object, or one per line for watch) instead of text.")
    static let skewOption = Option.value(
        "clock-skew", "<seconds>", help: "Pretend the device's clock is off by this many seconds (to try the staleSignature recovery).",
        mustBe: "a number of seconds"
    ) { text in Double(text).flatMap { $0.isFinite && abs($0) <= 10 * 365 * 86_400 ? $0 : nil } }
    static let sessionOption = Option.value("session", "<id>", help: "The session (default: the one the device is enrolled for).")
    static let assetsOption = Option.value(
        "assets-url", "<url>", help: "Fetch blobs from this base URL (a CDN or pulse-origin) instead of the server.")

    /// The validate step of the commands that use an enrolled device: the folder is named, the URLs are base URLs.
    static func validateDevice(_ arguments: Arguments) throws {
        _ = try folderPath(arguments)
        if let text = arguments[serverOption] { _ = try SyncClient.baseURL(text, option: serverOption.spelling) }
    }

    /// The device folder of `--device-dir` or `$PULSE_DEVICE_DIR`.
    static func folderPath(_ arguments: Arguments) throws -> String {
        if let path = arguments[deviceDirOption] { return path }
        if let path = ProcessInfo.processInfo.environment["PULSE_DEVICE_DIR"], !path.isEmpty { return path }
        throw UsageError("missing --device-dir <dir> (or set PULSE_DEVICE_DIR)")
    }

    /// An enrolled device, ready to talk to its server.
    struct Context {
        let folder: DeviceFolder
        let identity: DeviceIdentity
        let client: SyncClient
        let cache: DeviceCache
        let transport: URLSessionTransport

        init(_ arguments: Arguments, connections: Int = 8, timeout: Double = 60) throws {
            let skew = arguments[skewOption] ?? 0
            folder = try DeviceFolder.open(try folderPath(arguments))
            identity = try folder.identity()
            let server = try SyncClient.baseURL(arguments[serverOption] ?? identity.server, option: serverOption.spelling)
            transport = URLSessionTransport(timeout: timeout, connectionsPerHost: connections)
            client = SyncClient(
                server: server, transport: transport, signer: RequestSigner(deviceId: identity.deviceId, key: try folder.key()),
                clock: DeviceClock(skew: skew))
            cache = DeviceCache(folder: folder)
        }

        /// `--session`, or the session the device is enrolled for.
        func session(_ arguments: Arguments) throws -> String {
            if let id = arguments[sessionOption] { return id }
            guard identity.scopeKind == "session" else {
                throw UsageError("give --session <id> (this device is enrolled for \(identity.scopeKind) \(identity.scopeId))")
            }
            return identity.scopeId
        }

        /// `--assets-url`, checked.
        func assetsBase(_ arguments: Arguments) throws -> URL? {
            try arguments[assetsOption].map { try SyncClient.baseURL($0, option: assetsOption.spelling) }
        }
    }

    /// One JSON value on one line.
    static func line(_ value: JSONValue) -> String { String(decoding: value.canonicalBytes, as: UTF8.self) }

    /// Milliseconds, one decimal.
    static func milliseconds(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1000) }
}
