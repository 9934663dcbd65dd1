/// What went wrong on the device side, as one line a person can act on. One error type for the module;
/// `kind` says which family it is (and the CLI's exit code), `message` what and where. No message ever
/// contains a key, a token, a signature or slide content.
public struct DeviceError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The device folder is missing, not enrolled, or unsafe (loose permissions, a foreign owner).
        case deviceFolder
        /// Something the user gave does not fit (a slide number past the deck, a malformed URL).
        case badInput
        /// The server answered with a refusal (the flat 404, 400, 401, 429) or something that breaks the contract.
        case server
        /// The network failed: no connection, a reset, a timeout.
        case network
        /// A blob or manifest did not match its name or its manifest: it was not kept.
        case integrity
        /// The slide's key is not released (yet): the server decides, not the device.
        case notReleased
        /// The server's keys are for another deckVersion than the cached manifest: sync first.
        case staleDeck
        /// Reading or writing the device folder failed (a full disk, permissions).
        case storage
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    /// The CLI's exit code: 65 for a device folder or input that cannot be used, 1 for anything else.
    public var exitCode: Int32 {
        switch kind {
        case .deviceFolder, .badInput: 65
        default: 1
        }
    }
}
