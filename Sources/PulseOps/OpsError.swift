import Foundation
import PulseCore
import PulseStore
import PulseSystem

/// A push or gc failure, printed as one line: what went wrong and where (a file, an `s3://` URL or an
/// endpoint). Never carries credentials or secret file contents.
public struct OpsError: Error, CustomStringConvertible, Equatable {
    /// How the CLI should exit.
    public enum Kind: Sendable, Equatable {
        /// The package (or a blob or manifest in it) is missing or damaged: exit 65.
        case badInput
        /// The target or the network failed (unreachable, denied, full, read-only): exit 1.
        case failure
        /// The command line or its configuration is wrong (no credentials, bad target): exit 64.
        case usage
        /// Another push or gc holds the target's lease: try again later (exit 75, EX_TEMPFAIL).
        case busy
    }

    public var kind: Kind
    /// The file, folder, URL or endpoint at fault.
    public var location: String
    public var message: String

    public init(_ kind: Kind, _ location: String, _ message: String) {
        self.kind = kind
        self.location = location
        self.message = message
    }

    public var description: String { location.isEmpty ? message : "\(location): \(message)" }

    /// Any error from push or gc as an `OpsError`: store errors are target failures, input errors bad input.
    public static func from(_ error: any Error) -> OpsError {
        switch error {
        case let error as OpsError: error
        case let error as StoreError: OpsError(.failure, error.path, error.message)
        case let error as InputError: OpsError(.badInput, error.file, error.path.isEmpty ? error.message : "\(error.path): \(error.message)")
        default: OpsError(.failure, "", reason(error))
        }
    }

    /// A system or Foundation error in a few words of our own (the system's for errno), never
    /// Foundation's "The operation could not be completed. …".
    static func reason(_ error: any Error) -> String {
        if let code = Errno(foundation: error) { return code.description }
        let error = error as NSError
        if error.domain == NSURLErrorDomain { return S3Client.describe(error) }
        return "\(error.domain) error \(error.code)"
    }
}
