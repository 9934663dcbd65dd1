/// What every JSON line says about who wrote it: OpenTelemetry's `Resource` with `service.name` and
/// `service.version`, escaped once and kept as bytes.
public struct LogResource: Sendable {
    /// `"Resource":{"service.name":"…","service.version":"…"}`, without a leading comma.
    let member: [UInt8]

    public init(serviceName: String, serviceVersion: String) {
        var bytes = Array(#""Resource":{"service.name":"#.utf8)
        JSONText.appendString(serviceName.utf8, to: &bytes)
        bytes += #","service.version":"#.utf8
        JSONText.appendString(serviceVersion.utf8, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
        member = bytes
    }
}

extension LogResource {
    /// For a library user that names no service: `service.name` `unknown_service` (OpenTelemetry's default).
    public static let unnamed = LogResource(serviceName: "unknown_service", serviceVersion: "")
}
