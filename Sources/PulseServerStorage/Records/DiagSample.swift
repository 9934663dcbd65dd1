import PulseCore

/// One connection sample a device posted to `POST /api/sessions/{id}/diag` (validated before storage).
public struct DiagSample: Equatable, Sendable {
    public var sessionId: String
    public var deviceId: String
    /// Server clock, Unix seconds.
    public var receivedAt: Int64
    /// The app version (`build` in the moderator's view).
    public var build: String
    public var platform: String
    /// The connection figures as sent (already validated), kept for the live view and the report.
    public var connection: JSONValue

    public init(sessionId: String, deviceId: String, receivedAt: Int64, build: String, platform: String, connection: JSONValue) {
        self.sessionId = sessionId
        self.deviceId = deviceId
        self.receivedAt = receivedAt
        self.build = build
        self.platform = platform
        self.connection = connection
    }
}
