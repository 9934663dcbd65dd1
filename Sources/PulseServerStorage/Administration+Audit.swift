// How `Administration` records its operations in the audit log.
//
// Done: the entry goes to storage with the change and is written in its transaction. Refused (bad input,
// no such thing, a conflict) or failed: the action's transaction rolled back (or never began), and one
// entry per planned entry is appended afterwards with the result `refused:<reason>` or `error`, in a
// transaction of its own. That append is best-effort: when the database itself failed, it usually fails
// too, and the original error is what the caller sees.
extension Administration {
    /// An entry of this administration's actor and client, at `now`.
    func entry(_ action: AuditAction, target: String? = nil, detail: String? = nil, at now: Int64, result: AuditResult = .ok) -> AuditEntry {
        AuditEntry(at: now, actor: actor, action: action, target: target, detail: detail, client: client, result: result)
    }

    /// Records a refusal the caller decided before any operation ran (the staff API's bad request bodies).
    public func recordRefusal(_ action: AuditAction, target: String? = nil, detail: String? = nil, _ error: any Error) {
        recordRefusal(action, target: target, detail: detail, result: AuditResult(error))
    }

    /// Records an action refused with `result` before it ran (the staff API's 403: `refused:forbidden`).
    public func recordRefusal(_ action: AuditAction, target: String? = nil, detail: String? = nil, result: AuditResult) {
        try? storage.appendAudit([entry(action, target: target, detail: detail, at: clock(), result: result)])
    }

    /// Runs `body`; when it throws, records `audit` with the result the error gives, then rethrows.
    func recordingRefusal<T>(_ audit: [AuditEntry], _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            let result = AuditResult(error)
            try? storage.appendAudit(audit.map { entry in
                var refused = entry
                refused.result = result
                return refused
            })
            throw error
        }
    }

    func recordingRefusal<T>(_ action: AuditAction, target: String? = nil, detail: String? = nil, _ body: () throws -> T) throws -> T {
        try recordingRefusal([entry(action, target: target, detail: detail, at: clock())], body)
    }

    static func mintAction(_ kind: CredentialKind) -> AuditAction {
        switch kind {
        case .deviceCode: .deviceCodeCreate
        case .registrationToken: .registrationTokenCreate
        case .staffToken: .staffTokenCreate
        }
    }

    static func mintDetail(scope: DeviceScope?, maxDevices: Int?, role: StaffRole? = nil, session: String? = nil, expiresAt: Int64?) -> String {
        var parts: [String] = []
        if let scope { parts.append("for \(scope)") }
        if let role { parts.append("role \(role.rawValue)") }
        if let session { parts.append("session \(session)") }
        if let maxDevices { parts.append("up to \(maxDevices) devices") }
        parts.append(expiresAt.map { "expires \(TimeText.iso($0))" } ?? "no expiry")
        return parts.joined(separator: ", ")
    }

    /// The entries of a session change: one per setting it gives (`session.set` when it gives none).
    static func auditEntries(_ update: SessionUpdate) -> [(action: AuditAction, detail: String)] {
        var entries: [(action: AuditAction, detail: String)] = []
        if let state = update.state { entries.append((.sessionState, state.rawValue)) }
        if let slide = update.maxShown { entries.append((.sessionFrontier, "maxShown \(slide)")) }
        if let allow = update.allowDownload { entries.append((.sessionDownloadRule, "allowDownload \(allow)")) }
        if let networks = update.venueNetworks {
            entries.append((.sessionVenueRule, networks.isEmpty ? "no venue networks" : networks.map(\.description).joined(separator: ",")))
        }
        return entries.isEmpty ? [(.sessionSet, "nothing to set")] : entries
    }
}
