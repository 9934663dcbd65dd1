import PulseCore

extension PackageID {
    /// A package id as the database holds it: written from a `PackageID`, so one that does not parse means the
    /// database was changed by hand or is damaged; a storage error naming `what`, never a guess.
    static func stored(_ text: String, of what: @autoclosure () -> String) throws -> PackageID {
        guard let id = PackageID(text) else { throw ServerError(.storage, "\(what()) has an unreadable package id in the database") }
        return id
    }
}
