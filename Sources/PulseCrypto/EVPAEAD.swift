import COpenSSL
import Foundation

/// The libcrypto calls shared by the AEADs we use (AES-256-GCM, ChaCha20-Poly1305): 256-bit key,
/// 96-bit nonce, 128-bit tag appended to the ciphertext.
struct EVPAEAD: Sendable {
    static let keyByteCount = 32
    static let nonceByteCount = 12
    static let tagByteCount = 16

    /// The fetched EVP_CIPHER.
    nonisolated(unsafe) let cipher: OpaquePointer
    /// For error messages ("AES-256-GCM key must be 32 bytes").
    let name: String

    func seal(_ plaintext: some ContiguousBytes, key: [UInt8], nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        try checkLengths(key: key, nonce: nonce)
        return try plaintext.withUnsafeBytes { input in try seal(input: input, key: key, nonce: nonce, aad: aad) }
    }

    /// Opens ciphertext ‖ tag; `tagByteCount` below 16 exists only to check the primitive against test vectors.
    func open(
        _ sealed: some ContiguousBytes, key: [UInt8], nonce: [UInt8], aad: [UInt8], tagByteCount: Int = tagByteCount
    ) throws -> [UInt8] {
        try checkLengths(key: key, nonce: nonce)
        return try sealed.withUnsafeBytes { input in
            guard input.count >= tagByteCount else { throw CryptoError.authenticationFailure }
            return try open(input: input, key: key, nonce: nonce, aad: aad, tagByteCount: tagByteCount)
        }
    }

    private func checkLengths(key: [UInt8], nonce: [UInt8]) throws {
        guard key.count == Self.keyByteCount else {
            throw CryptoError.badLength(what: "\(name) key", expected: Self.keyByteCount, actual: key.count)
        }
        guard nonce.count == Self.nonceByteCount else {
            throw CryptoError.badLength(what: "\(name) nonce", expected: Self.nonceByteCount, actual: nonce.count)
        }
    }

    /// `seal`, written to the start of `output` (grown if it is too short; its bytes past the sealed
    /// ones are left as they were): one buffer sealed into again and again costs no allocation.
    /// - Returns: the count of bytes sealed, the ciphertext and the tag.
    func seal(_ plaintext: some ContiguousBytes, key: [UInt8], nonce: [UInt8], aad: [UInt8], into output: inout [UInt8]) throws -> Int {
        try checkLengths(key: key, nonce: nonce)
        return try plaintext.withUnsafeBytes { input in
            let count = input.count + Self.tagByteCount
            if output.count < count { output.append(contentsOf: repeatElement(0, count: count - output.count)) }
            try output.withUnsafeMutableBufferPointer { out in
                try seal(input: input, key: key, nonce: nonce, aad: aad, to: out.baseAddress!)
            }
            return count
        }
    }

    /// `seal(_:key:nonce:aad:into:)` that also hashes what it writes, piece by piece while each piece is
    /// still in the cache: `digest` is the SHA-256 of `output[..<count]`, without another pass over it.
    func sealHashing(
        _ plaintext: some ContiguousBytes, key: [UInt8], nonce: [UInt8], aad: [UInt8], into output: inout [UInt8]
    ) throws -> (count: Int, digest: [UInt8]) {
        try checkLengths(key: key, nonce: nonce)
        let hasher = SHA256Hasher()
        let count = try plaintext.withUnsafeBytes { input in
            let count = input.count + Self.tagByteCount
            if output.count < count { output.append(contentsOf: repeatElement(0, count: count - output.count)) }
            try output.withUnsafeMutableBufferPointer { out in
                try seal(input: input, key: key, nonce: nonce, aad: aad, to: out.baseAddress!) { piece in hasher.update(buffer: piece) }
            }
            return count
        }
        return (count, hasher.finalize())
    }

    private func seal(input: UnsafeRawBufferPointer, key: [UInt8], nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        // No zero-fill: every byte is written by the cipher (a slide can be megabytes).
        try [UInt8](unsafeUninitializedCapacity: input.count + Self.tagByteCount) { out, initialized in
            try seal(input: input, key: key, nonce: nonce, aad: aad, to: out.baseAddress!)
            initialized = input.count + Self.tagByteCount
        }
    }

    /// Bytes encrypted per call when the output is hashed as it is written: small enough to stay in the
    /// cache between the cipher and the hash.
    static let hashedPieceByteCount = 64 << 10

    /// Writes ciphertext ‖ tag, `input.count + tagByteCount` bytes, to `out`; with `written`, each piece of
    /// the output is handed to it once written, in order.
    private func seal(
        input: UnsafeRawBufferPointer, key: [UInt8], nonce: [UInt8], aad: [UInt8], to out: UnsafeMutablePointer<UInt8>,
        written wrote: ((UnsafeRawBufferPointer) -> Void)? = nil
    ) throws {
        let context = try CipherContext()
        try check(EVP_EncryptInit_ex2(context.pointer, cipher, key, nonce, nil), "EVP_EncryptInit_ex2")
        let tagByteCount = Self.tagByteCount
        var written: Int32 = 0
        if !aad.isEmpty {
            try check(EVP_EncryptUpdate(context.pointer, nil, &written, aad, Int32(aad.count)), "AAD")
        }
        var offset = 0
        // EVP_EncryptUpdate takes an Int32 length: feed large inputs in pieces.
        let pieceLimit = wrote == nil ? 1 << 30 : Self.hashedPieceByteCount
        while offset < input.count {
            let piece = min(input.count - offset, pieceLimit)
            try check(
                EVP_EncryptUpdate(
                    context.pointer, out + offset, &written,
                    input.baseAddress!.assumingMemoryBound(to: UInt8.self) + offset, Int32(piece)),
                "EVP_EncryptUpdate")
            wrote?(UnsafeRawBufferPointer(start: out + offset, count: Int(written)))
            offset += Int(written)
        }
        try check(EVP_EncryptFinal_ex(context.pointer, out + offset, &written), "EVP_EncryptFinal_ex")
        try check(
            EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_AEAD_GET_TAG, Int32(tagByteCount), out + input.count),
            "get \(name) tag")
        // GCM writes all of the ciphertext in the updates (Final adds nothing): what is left is the tag.
        wrote?(UnsafeRawBufferPointer(start: out + offset, count: input.count + tagByteCount - offset))
    }

    private func open(
        input: UnsafeRawBufferPointer, key: [UInt8], nonce: [UInt8], aad: [UInt8], tagByteCount: Int
    ) throws -> [UInt8] {
        let context = try CipherContext()
        try check(EVP_DecryptInit_ex2(context.pointer, cipher, key, nonce, nil), "EVP_DecryptInit_ex2")
        let bodyCount = input.count - tagByteCount
        var tag = Array(input[bodyCount...])
        try check(EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_AEAD_SET_TAG, Int32(tagByteCount), &tag), "set \(name) tag")
        // One spare byte so that the output pointer is valid even for an empty plaintext.
        var output = [UInt8](repeating: 0, count: bodyCount + 1)
        var authentic = false
        output.withUnsafeMutableBufferPointer { out in
            var written: Int32 = 0
            if !aad.isEmpty, EVP_DecryptUpdate(context.pointer, nil, &written, aad, Int32(aad.count)) != 1 { return }
            var offset = 0
            let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
            while offset < bodyCount {
                let piece = min(bodyCount - offset, 1 << 30)
                guard EVP_DecryptUpdate(context.pointer, out.baseAddress! + offset, &written, base! + offset, Int32(piece)) == 1
                else { return }
                offset += Int(written)
            }
            authentic = EVP_DecryptFinal_ex(context.pointer, out.baseAddress! + offset, &written) == 1
        }
        ERR_clear_error()
        guard authentic else { throw CryptoError.authenticationFailure }
        output.removeLast()
        return output
    }
}

/// Owns one EVP_CIPHER_CTX.
final class CipherContext {
    let pointer: OpaquePointer

    init() throws {
        guard let pointer = EVP_CIPHER_CTX_new() else { throw CryptoError.fromQueue("EVP_CIPHER_CTX_new") }
        self.pointer = pointer
    }

    deinit { EVP_CIPHER_CTX_free(pointer) }
}

/// Ciphers fetched once: an implicit fetch on every call costs a lock and a lookup.
enum Ciphers {
    nonisolated(unsafe) static let aes256gcm = fetch("AES-256-GCM")
    nonisolated(unsafe) static let chacha20Poly1305 = fetch("ChaCha20-Poly1305")

    private static func fetch(_ name: String) -> OpaquePointer {
        guard let cipher = EVP_CIPHER_fetch(nil, name, nil) else { fatalError("libcrypto has no \(name)") }
        return cipher
    }
}
