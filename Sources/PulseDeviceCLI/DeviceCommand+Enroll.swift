import Foundation
import PulseCommandLine
import PulseCore
import PulseDevice

extension DeviceCommand {
    /// `enroll (--server URL --token T | --link L) --device-dir DIR [--name N] [--platform P] [--json]`
    static let enrollServer = Option.value("server", "<url>", help: "The sync server's base URL.")
    static let enrollToken = Option.value("token", "<token>", help: "A device code or registration token; - reads it from standard input.")
    static let enrollLink = Option.value(
        "link", "<link>", help: "An enrollment link from the console (its QR code): the server and the code or token in one; - reads it from standard input.")
    static let enrollName = Option.value("name", "<name>", help: "The device's name as staff see it (default: pulse-device on <host>).")
    static let enrollPlatform = Option.value("platform", "<platform>", help: "ios, android, … (default linux).")
    static let requireSigned = Option.flag(
        "require-signed-answers",
        help: "Refuse a server that publishes no answer keys (before the token is spent) instead of accepting its answers unsigned.")

    static func enrollCommand(console: Console) -> Command {
        Command(
            name: "enroll",
            abstract: "Make the device key, enroll it with a device code or registration token, check the certificate.",
            discussion: """
                Makes a P-256 key (device-key.pem, 0600), posts its public half with the token to /api/sync/enroll, checks
                the returned device certificate against the server's published key (/api/sync/device-cert-keys), and only
                then writes device.json. A refused token (the flat 404) leaves nothing behind. --token - reads the token
                from standard input (it then stays out of the process list). --link takes the console's enrollment link
                instead of --server and --token (https://HOST/console/enroll#code=… or #token=…, docs/console.md).
                """,
            examples: [
                "pulse-device enroll --server https://sync.example.net --token ABCD-EFGH-JKMN --device-dir ~/.pulse/phone",
                "echo \"$TOKEN\" | pulse-device enroll --server http://127.0.0.1:8080 --token - --device-dir dev1 --name 'Ada' --platform ios",
                "pulse-device enroll --link 'https://sync.example.net/console/enroll#code=ABCD-EFGH-JKMN' --device-dir ~/.pulse/phone",
            ],
            options: [enrollServer, enrollToken, enrollLink, deviceDirOption, enrollName, enrollPlatform, requireSigned, jsonOption],
            validate: { arguments in
                if arguments[enrollLink] != nil {
                    guard arguments[enrollServer] == nil, arguments[enrollToken] == nil else {
                        throw UsageError("give --link, or --server and --token, not both")
                    }
                } else {
                    guard let server = arguments[enrollServer] else { throw UsageError("missing --server <url> (or give --link)") }
                    guard arguments[enrollToken] != nil else { throw UsageError("missing --token <token> (or give --link)") }
                    _ = try SyncClient.baseURL(server, option: enrollServer.spelling)
                }
                _ = try folderPath(arguments)
            },
            run: { arguments in
                let (server, token) = try serverAndToken(arguments)
                let folder = try DeviceFolder.open(try folderPath(arguments), create: true)
                let name = arguments[enrollName] ?? "pulse-device on \(ProcessInfo.processInfo.hostName)"
                let platform = arguments[enrollPlatform] ?? "linux"
                let transport = URLSessionTransport(timeout: 30, connectionsPerHost: 2)
                defer { transport.invalidate() }
                let identity = try Enrollment.enroll(
                    server: server, token: token, folder: folder, name: name, platform: platform, transport: transport,
                    requireSignedAnswers: arguments[requireSigned])
                if arguments[jsonOption] {
                    console.out(line([
                        "deviceId": .string(identity.deviceId), "server": .string(identity.server), "kid": .string(identity.kid),
                        "scope": ["kind": .string(identity.scopeKind), "id": .string(identity.scopeId)],
                    ]))
                } else {
                    console.out("enrolled device \(identity.deviceId) for \(identity.scopeKind) \(identity.scopeId) with \(identity.server); "
                        + "certificate checked against the server's key \(identity.kid.prefix(12))…")
                }
                return ExitCode.success
            })
    }

    /// The server and the token: from `--link` (`-`: standard input) or from `--server` and `--token`.
    static func serverAndToken(_ arguments: Arguments) throws -> (URL, String) {
        if var text = arguments[enrollLink] {
            if text == "-" {
                text = (readLine(strippingNewline: true) ?? "").trimmingCharacters(in: .whitespaces)
                guard !text.isEmpty else { throw UsageError("--link -: standard input held no link") }
            }
            let link: EnrollmentLink
            do { link = try EnrollmentLink(parsing: text) } catch { throw DeviceError(.badInput, "--link: \(error.description)") }
            return (try SyncClient.baseURL(link.server, option: enrollLink.spelling), link.credential.secret)
        }
        var token = arguments[enrollToken] ?? ""
        if token == "-" {
            token = (readLine(strippingNewline: true) ?? "").trimmingCharacters(in: .whitespaces)
            guard !token.isEmpty else { throw UsageError("--token -: standard input held no token") }
        }
        return (try SyncClient.baseURL(arguments[enrollServer] ?? "", option: enrollServer.spelling), token)
    }
}
