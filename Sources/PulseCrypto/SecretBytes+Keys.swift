import COpenSSL
import Foundation

/// Slicing, encoding and AES-256-GCM for keys held in `SecretBytes`, so that callers outside this module
/// never hold key material in a plain array.
extension SecretBytes {
    /// Bytes `range` as a secret of their own (a key and a nonce cut from one derivation).
    public func subrange(_ range: Range<Int>) -> SecretBytes {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range outside the secret")
        return withUnsafeBytes { SecretBytes(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// Standard base64 with padding, for a key file written in the same call (the string is the caller's).
    public func base64EncodedString() -> String {
        withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress, buffer.count > 0 else { return "" }
            // No copy into a Data buffer that would outlive the call unwiped.
            return Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: buffer.count, deallocator: .none)
                .base64EncodedString()
        }
    }
}

extension AES256GCM {
    /// Encrypts `plaintext` with a key and nonce held as secrets; returns ciphertext ‖ tag.
    public static func seal(_ plaintext: some ContiguousBytes, key: SecretBytes, nonce: SecretBytes) throws -> [UInt8] {
        try withPlainCopies(key, nonce) { key, nonce in try seal(plaintext, key: key, nonce: nonce) }
    }

    /// Decrypts ciphertext ‖ tag with a key and nonce held as secrets.
    public static func open(_ sealed: some ContiguousBytes, key: SecretBytes, nonce: SecretBytes) throws -> [UInt8] {
        try withPlainCopies(key, nonce) { key, nonce in try open(sealed, key: key, nonce: nonce) }
    }

    /// The array API's copies live for one call and are wiped before they are freed.
    private static func withPlainCopies<R>(
        _ key: SecretBytes, _ nonce: SecretBytes, _ body: ([UInt8], [UInt8]) throws -> R
    ) rethrows -> R {
        var keyCopy = key.withUnsafeBytes { Array($0) }
        var nonceCopy = nonce.withUnsafeBytes { Array($0) }
        defer {
            keyCopy.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
            nonceCopy.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
        }
        return try body(keyCopy, nonceCopy)
    }
}
