import COpenSSL

/// Errors from the cryptographic primitives.
public enum CryptoError: Error, Equatable, CustomStringConvertible {
    /// A key, nonce or tag has the wrong length.
    case badLength(what: String, expected: Int, actual: Int)
    /// The ciphertext or its tag failed authentication.
    case authenticationFailure
    /// A parameter is outside what the primitive accepts (for example an HKDF output too long).
    case invalidParameter(String)
    /// A key is not usable: malformed encoding, another curve, a point not on the curve. The text
    /// says which rule failed and never contains key material.
    case badKey(String)
    /// libcrypto reported an error; the text comes from its error queue.
    case library(String)

    public var description: String {
        switch self {
        case let .badLength(what, expected, actual): "\(what) must be \(expected) bytes, got \(actual)"
        case .authenticationFailure: "authentication failed (wrong key or damaged ciphertext)"
        case let .invalidParameter(text): text
        case let .badKey(text): "bad key: \(text)"
        case let .library(text): "libcrypto: \(text)"
        }
    }

    /// Drains libcrypto's thread-local error queue into one error.
    static func fromQueue(_ operation: String) -> CryptoError {
        var messages: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return .library(messages.isEmpty ? "\(operation) failed" : "\(operation): " + messages.joined(separator: "; "))
    }
}

/// Calls a libcrypto function that returns 1 on success.
@inline(__always)
func check(_ result: Int32, _ operation: String) throws {
    guard result == 1 else { throw CryptoError.fromQueue(operation) }
}
