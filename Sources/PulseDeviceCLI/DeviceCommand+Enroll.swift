import Foundation
import PulseCommandLine
import PulseCore
import PulseDevice

extension DeviceCommand {
    /// `enroll --server URL --token T --device-dir DIR [--name N] [--platform P] [--json]`
    static let enrollServer = Option.value("server", "<url>", help: "The sync server's base URL.").required()
    static let enrollToken = Option.value("token", "<token>", help: "A device code or registration token; - reads it from standard input.")
        .required()
    static let enrollName = Option.value("name", "<name>", help: "The device's name as staff see it (default: pulse-device on <host>).")
    static let enrollPlatform = Option.value("platform", "<platform>", help: "ios, android, … (default linux).")

    static func enrollCommand(console: Console) -> Command {
        Command(
            name: "enroll",
            abstract: "Make the device key, enroll it with a device code or registration token, check the certificate.",
            discussion: """
                Makes a P-256 key (device-key.pem, 0600), posts its public half with the token to /api/sync/enroll, checks
                the returned device certificate against the server's published key (/api/sync/device-cert-keys), and only
                then writes device.json. A refused token (the flat 404) leaves nothing behind. --token - reads the token
                from standard input (it then stays out of the process list).
                """,
            examples: [
                "pulse-device enroll --server https://sync.example.net --token ABCD-EFGH-JKMN --device-dir ~/.pulse/phone",
                "echo \"$TOKEN\" | pulse-device enroll --server http://127.0.0.1:8080 --token - --device-dir dev1 --name 'Ada' --platform ios",
            ],
            options: [enrollServer, enrollToken, deviceDirOption, enrollName, enrollPlatform, jsonOption],
            validate: { arguments in
                _ = try SyncClient.baseURL(arguments[enrollServer], option: enrollServer.spelling)
                _ = try folderPath(arguments)
            },
            run: { arguments in
                let serverText = arguments[enrollServer]
                var token = arguments[enrollToken]
                if token == "-" {
                    token = (readLine(strippingNewline: true) ?? "").trimmingCharacters(in: .whitespaces)
                    guard !token.isEmpty else { throw UsageError("--token -: standard input held no token") }
                }
                let server = try SyncClient.baseURL(serverText, option: enrollServer.spelling)
                let folder = try DeviceFolder.open(try folderPath(arguments), create: true)
                let name = arguments[enrollName] ?? "pulse-device on \(ProcessInfo.processInfo.hostName)"
                let platform = arguments[enrollPlatform] ?? "linux"
                let transport = URLSessionTransport(timeout: 30, connectionsPerHost: 2)
                defer { transport.invalidate() }
                let identity = try Enrollment.enroll(
                    server: server, token: token, folder: folder, name: name, platform: platform, transport: transport)
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
}
