import COpenSSL
import Foundation

/// Slicing, copying, encoding and AES-256-GCM for keys held in `SecretBytes`, so that callers outside this
/// module never touch a pointer and hold key material in a plain array only where an API wants one.
extension SecretBytes {
    /// The first `count` bytes (all of them if there are fewer), as a plain array: a header to sniff (what
    /// kind of file a decrypted slide is), never key material. Negative counts take nothing.
    public func prefix(_ count: Int) -> [UInt8] {
        withUnsafeBytes { Array($0.prefix(max(count, 0))) }
    }

    /// A copy in a plain array, for an API that keeps one (a PEM key stored in the database). The caller owns
    /// it and wipes it (`SecretBytes.wipe`) when done; `withCopiedBytes` does that itself.
    public func copyBytes() -> [UInt8] {
        withUnsafeBytes { Array($0) }
    }

    /// `body` with a copy in a plain array, for one call of an API that takes arrays; the copy is wiped when
    /// `body` returns or throws (copies `body` makes of it are its own).
    public func withCopiedBytes<Result>(_ body: ([UInt8]) throws -> Result) rethrows -> Result {
        var copy = copyBytes()
        defer { SecretBytes.wipe(&copy) }
        return try body(copy)
    }

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

    /// `seal(_:key:nonce:into:)` with a key and nonce held as secrets: ciphertext ‖ tag at the start of
    /// `output`, whose storage is kept; returns the count written.
    public static func seal(_ plaintext: some ContiguousBytes, key: SecretBytes, nonce: SecretBytes, into output: inout [UInt8]) throws -> Int {
        try withPlainCopies(key, nonce) { key, nonce in try seal(plaintext, key: key, nonce: nonce, into: &output) }
    }

    /// `sealHashing(_:key:nonce:into:)` with a key and nonce held as secrets.
    public static func sealHashing(
        _ plaintext: some ContiguousBytes, key: SecretBytes, nonce: SecretBytes, into output: inout [UInt8]
    ) throws -> (count: Int, sha256: [UInt8]) {
        try withPlainCopies(key, nonce) { key, nonce in try sealHashing(plaintext, key: key, nonce: nonce, into: &output) }
    }

    /// Decrypts ciphertext ‖ tag with a key and nonce held as secrets.
    public static func open(_ sealed: some ContiguousBytes, key: SecretBytes, nonce: SecretBytes) throws -> [UInt8] {
        try withPlainCopies(key, nonce) { key, nonce in try open(sealed, key: key, nonce: nonce) }
    }

    /// The array API's copies live for one call and are wiped before they are freed.
    private static func withPlainCopies<R>(
        _ key: SecretBytes, _ nonce: SecretBytes, _ body: ([UInt8], [UInt8]) throws -> R
    ) rethrows -> R {
        try key.withCopiedBytes { key in try nonce.withCopiedBytes { nonce in try body(key, nonce) } }
    }
}
