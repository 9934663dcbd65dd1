import Foundation
import PulseCore

/// The JSON (and status word) of credentials and devices, shared by the staff API and `pulse-server admin …
/// --json` (the command itself is in PulseServerCLI, as an extension of this namespace).
public enum AdminCommand {
    public static func status(_ record: CredentialRecord, now: Int64 = TimeText.now()) -> String {
        if record.revokedAt != nil { return "revoked" }
        if record.kind == .deviceCode && record.usedAt != nil { return "used" }
        if let expires = record.expiresAt, expires <= now { return "expired" }
        if let max = record.maxDevices, record.devicesEnrolled >= max { return "full" }
        return "active"
    }

    public static func json(_ record: CredentialRecord, recent: Int = 0) -> JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(record.id), "kind": .string(record.kind.rawValue), "status": .string(status(record)),
            "devicesEnrolled": .int(record.devicesEnrolled), "createdAt": .string(TimeText.iso(record.createdAt)),
        ]
        if record.kind != .staffToken { fields["enrolledLastMinute"] = .int(recent) }
        if let scope = record.scope { fields["scope"] = ["kind": .string(scope.kind), "id": .string(scope.id)] }
        if let max = record.maxDevices { fields["maxDevices"] = .int(max) }
        StaffAPI.add(record.limits, to: &fields)
        if let at = record.expiresAt { fields["expiresAt"] = .string(TimeText.iso(at)) }
        if let at = record.usedAt { fields["usedAt"] = .string(TimeText.iso(at)) }
        if let at = record.revokedAt { fields["revokedAt"] = .string(TimeText.iso(at)) }
        return .object(fields)
    }

    public static func json(_ device: DeviceRecord) -> JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(device.id), "platform": .string(device.platform), "name": .string(device.name),
            "scope": ["kind": .string(device.scope.kind), "id": .string(device.scope.id)],
            "publicKey": .string(Data(device.publicKey).base64EncodedString()), "enrolledAt": .string(TimeText.iso(device.enrolledAt)),
            "credential": .string(device.credentialId), "status": .string(device.isRevoked ? "revoked" : "active"),
        ]
        if let at = device.revokedAt { fields["revokedAt"] = .string(TimeText.iso(at)) }
        return .object(fields)
    }
}
