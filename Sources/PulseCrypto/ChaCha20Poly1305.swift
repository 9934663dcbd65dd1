import Foundation
import COpenSSL

/// ChaCha20-Poly1305 (RFC 8439) with a 96-bit nonce and a 128-bit tag appended to the ciphertext.
public enum ChaCha20Poly1305 {
    public static let keyByteCount = 32
    public static let nonceByteCount = 12
    public static let tagByteCount = 16

    /// Encrypts `plaintext`; returns ciphertext ‖ tag.
    public static func seal(
        _ plaintext: some ContiguousBytes, key: [UInt8], nonce: [UInt8], authenticating aad: [UInt8] = []
    ) throws -> [UInt8] {
        try checkLengths(key: key, nonce: nonce)
        return try plaintext.withUnsafeBytes { input throws in
            try seal(input: input, key: key, nonce: nonce, aad: aad)
        }
    }

    /// Decrypts ciphertext ‖ tag; throws `.authenticationFailure` if anything was changed.
    public static func open(
        _ sealed: some ContiguousBytes, key: [UInt8], nonce: [UInt8], authenticating aad: [UInt8] = []
    ) throws -> [UInt8] {
        try checkLengths(key: key, nonce: nonce)
        return try sealed.withUnsafeBytes { input throws in
            guard input.count >= tagByteCount else { throw CryptoError.authenticationFailure }
            return try open(input: input, key: key, nonce: nonce, aad: aad)
        }
    }

    private static func checkLengths(key: [UInt8], nonce: [UInt8]) throws {
        guard key.count == keyByteCount else {
            throw CryptoError.badLength(what: "ChaCha20-Poly1305 key", expected: keyByteCount, actual: key.count)
        }
        guard nonce.count == nonceByteCount else {
            throw CryptoError.badLength(what: "ChaCha20-Poly1305 nonce", expected: nonceByteCount, actual: nonce.count)
        }
    }

    private static func seal(
        input: UnsafeRawBufferPointer, key: [UInt8], nonce: [UInt8], aad: [UInt8]
    ) throws -> [UInt8] {
        let context = try CipherContext()
        try check(EVP_EncryptInit_ex2(context.pointer, Ciphers.chacha20Poly1305, key, nonce, nil), "EVP_EncryptInit_ex2")
        var output = [UInt8](repeating: 0, count: input.count + tagByteCount)
        try output.withUnsafeMutableBufferPointer { out throws in
            var written: Int32 = 0
            if !aad.isEmpty {
                try check(EVP_EncryptUpdate(context.pointer, nil, &written, aad, Int32(aad.count)), "AAD")
            }
            var offset = 0
            // EVP_EncryptUpdate takes an Int32 length: feed large inputs in pieces.
            while offset < input.count {
                let piece = min(input.count - offset, 1 << 30)
                try check(
                    EVP_EncryptUpdate(
                        context.pointer, out.baseAddress! + offset, &written,
                        input.baseAddress!.assumingMemoryBound(to: UInt8.self) + offset, Int32(piece)),
                    "EVP_EncryptUpdate")
                offset += Int(written)
            }
            try check(EVP_EncryptFinal_ex(context.pointer, out.baseAddress! + offset, &written), "EVP_EncryptFinal_ex")
            try check(
                EVP_CIPHER_CTX_ctrl(
                    context.pointer, EVP_CTRL_AEAD_GET_TAG, Int32(tagByteCount), out.baseAddress! + input.count),
                "get Poly1305 tag")
        }
        return output
    }

    private static func open(
        input: UnsafeRawBufferPointer, key: [UInt8], nonce: [UInt8], aad: [UInt8]
    ) throws -> [UInt8] {
        let context = try CipherContext()
        try check(EVP_DecryptInit_ex2(context.pointer, Ciphers.chacha20Poly1305, key, nonce, nil), "EVP_DecryptInit_ex2")
        let bodyCount = input.count - tagByteCount
        var tag = Array(input[bodyCount...])
        try check(
            EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_AEAD_SET_TAG, Int32(tagByteCount), &tag), "set Poly1305 tag")
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

extension Ciphers {
    nonisolated(unsafe) static let chacha20Poly1305: OpaquePointer = {
        guard let cipher = EVP_CIPHER_fetch(nil, "ChaCha20-Poly1305", nil) else {
            fatalError("libcrypto has no ChaCha20-Poly1305")
        }
        return cipher
    }()
}
