import Foundation
import PulseCore
import PulseServerStorage

/// The staff API's JSON of what it lists (`GET tokens`, `devices`, `sessions`): the same objects as
/// `pulse-server admin … --json` prints.
public enum StaffJSON {
    /// A credential's status as the listings show it: `revoked`, `used`, `expired`, `full` or `active`.
    public static func status(_ record: CredentialRecord, now: Int64 = TimeText.now()) -> String {
        if record.revokedAt != nil { return "revoked" }
        if record.kind == .deviceCode && record.usedAt != nil { return "used" }
        if let expires = record.expiresAt, expires <= now { return "expired" }
        if let max = record.maxDevices, record.devicesEnrolled >= max { return "full" }
        return "active"
    }

    /// `recent`: devices it enrolled in the last minute (a leaked link shows as a spike).
    public static func credential(_ record: CredentialRecord, recent: Int = 0) -> JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(record.id), "kind": .string(record.kind.rawValue), "status": .string(status(record)),
            "devicesEnrolled": .int(record.devicesEnrolled), "createdAt": .string(TimeText.iso(record.createdAt)),
        ]
        if record.kind != .staffToken { fields["enrolledLastMinute"] = .int(recent) }
        if let scope = record.scope { fields["scope"] = ["kind": .string(scope.kind), "id": .string(scope.id)] }
        if let max = record.maxDevices { fields["maxDevices"] = .int(max) }
        if record.kind == .staffToken { fields["role"] = record.staffRole.map { .string($0.rawValue) } ?? .null }
        if let session = record.staffSession { fields["session"] = .string(session) }
        StaffAPI.add(record.limits, to: &fields)
        if let at = record.expiresAt { fields["expiresAt"] = .string(TimeText.iso(at)) }
        if let at = record.usedAt { fields["usedAt"] = .string(TimeText.iso(at)) }
        if let at = record.revokedAt { fields["revokedAt"] = .string(TimeText.iso(at)) }
        return .object(fields)
    }

    public static func device(_ device: DeviceRecord) -> JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(device.id), "platform": .string(device.platform), "name": .string(device.name),
            "scope": ["kind": .string(device.scope.kind), "id": .string(device.scope.id)],
            "publicKey": .string(Data(device.publicKey).base64EncodedString()), "enrolledAt": .string(TimeText.iso(device.enrolledAt)),
            "credential": .string(device.credentialId), "status": .string(device.isRevoked ? "revoked" : "active"),
        ]
        if let at = device.revokedAt { fields["revokedAt"] = .string(TimeText.iso(at)) }
        return .object(fields)
    }

    public static func session(_ record: SessionRecord) -> JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(record.id), "state": .string(record.state.rawValue), "allowDownload": .bool(record.allowDownload),
            "venueNetworks": .array(record.venueNetworks.map { .string($0.description) }), "packageId": .string(record.packageId.hex),
            "packageVersion": .string(record.packageVersion), "deckVersion": .int(record.deckVersion), "slideCount": .int(record.slideCount),
            "maxShown": record.maxShown.map { .int($0) } ?? .null,
            "rehearsalMaxShown": record.rehearsalMaxShown.map { .int($0) } ?? .null,
            "updatedAt": .string(TimeText.iso(record.updatedAt)),
        ]
        if let series = record.seriesId { fields["seriesId"] = .string(series) }
        return .object(fields)
    }

    /// An audit row: `{"id","at","actor":{"kind","id","role"},"action","target","detail","client","result"}` (absent
    /// values are null). Nothing in it is a secret; every string may be hostile to whoever renders it.
    public static func audit(_ record: AuditRecord) -> JSONValue {
        let entry = record.entry
        func text(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
        return [
            "id": .int(Int(record.id)), "at": .string(TimeText.iso(entry.at)),
            "actor": ["kind": .string(entry.actor.kind.rawValue), "id": .string(entry.actor.id), "role": text(entry.actor.role)],
            "action": .string(entry.action.rawValue), "target": text(entry.target), "detail": text(entry.detail), "client": text(entry.client),
            "result": .string(entry.result.text),
        ]
    }
}
