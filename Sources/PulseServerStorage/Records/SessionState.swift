/// Where a session is in its life. Only `live` and `ended` ever release keys (contract section 4).
public enum SessionState: String, CaseIterable, Codable, Sendable {
    case draft
    case scheduled
    /// The presenter practises: advances move a separate rehearsal frontier that releases nothing.
    case rehearsal
    case live
    case ended

    /// Every state's name, for help and error text.
    public static let names = allCases.map(\.rawValue).joined(separator: "|")
}
