import Foundation
import PulseCore
import PulseStore

/// `device.json`: who this device is, written once by `enroll` after the certificate checked out.
///
/// ```json
/// {"format": "pulse-device/1", "server": "https://sync.example.net", "deviceId": "<32 hex>",
///  "deviceCert": "<base64url(json).base64url(sig)>", "kid": "<the signing key's thumbprint>",
///  "scope": {"kind": "series", "id": "devconf-2026"}, "name": "Ada's iPhone", "platform": "ios",
///  "enrolledAt": "2026-12-03T08:41:07Z"}
/// ```
public struct DeviceIdentity: Sendable, Equatable {
    public static let format = "pulse-device/1"

    /// The server's base URL, as given to `enroll` (no trailing slash).
    public var server: String
    public var deviceId: String
    public var deviceCert: String
    public var kid: String
    /// `session` or `series`, and its id.
    public var scopeKind: String
    public var scopeId: String
    public var name: String
    public var platform: String
    public var enrolledAt: String

    public init(
        server: String, deviceId: String, deviceCert: String, kid: String, scopeKind: String, scopeId: String, name: String,
        platform: String, enrolledAt: String
    ) {
        self.server = server
        self.deviceId = deviceId
        self.deviceCert = deviceCert
        self.kid = kid
        self.scopeKind = scopeKind
        self.scopeId = scopeId
        self.name = name
        self.platform = platform
        self.enrolledAt = enrolledAt
    }

    var json: JSONValue {
        [
            "format": .string(Self.format), "server": .string(server), "deviceId": .string(deviceId), "deviceCert": .string(deviceCert),
            "kid": .string(kid), "scope": ["kind": .string(scopeKind), "id": .string(scopeId)], "name": .string(name),
            "platform": .string(platform), "enrolledAt": .string(enrolledAt),
        ]
    }

    /// Writes it atomically, 0600.
    func write(to url: URL) throws {
        do { try AtomicFile.write(json.prettyBytes, to: url, mode: 0o600) } catch {
            throw DeviceError(.storage, "cannot write \(url.path): \(error)")
        }
    }

    static func read(_ url: URL) throws -> DeviceIdentity {
        let value: JSONValue
        do { value = try JSONValue.parse(try Data(contentsOf: url), file: url.path) } catch {
            throw DeviceError(.deviceFolder, "\(url.path): \(error)")
        }
        func text(_ value: JSONValue?, _ field: String) throws -> String {
            guard let text = value?.stringValue else { throw DeviceError(.deviceFolder, "\(url.path): \(field) is missing") }
            return text
        }
        guard value["format"]?.stringValue == format else {
            throw DeviceError(.deviceFolder, "\(url.path): not a \(format) identity")
        }
        return DeviceIdentity(
            server: try text(value["server"], "server"), deviceId: try text(value["deviceId"], "deviceId"),
            deviceCert: try text(value["deviceCert"], "deviceCert"), kid: try text(value["kid"], "kid"),
            scopeKind: try text(value["scope"]?["kind"], "scope.kind"), scopeId: try text(value["scope"]?["id"], "scope.id"),
            name: try text(value["name"], "name"), platform: try text(value["platform"], "platform"),
            enrolledAt: try text(value["enrolledAt"], "enrolledAt"))
    }
}
