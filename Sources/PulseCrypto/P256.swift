import COpenSSL

/// ECDSA over NIST P-256 with SHA-256 (ES256, RFC 7518 section 3.4): the device keys of the mobile
/// contract. A device signs `X-Pulse-Device` requests with its secure-element key; the server checks
/// them against the public key it stored at enrollment.
///
/// - `PrivateKey`: generate, PKCS#8 DER/PEM in and out, sign (IEEE P1363 `r‖s`, 64 bytes).
/// - `PublicKey`: import from SubjectPublicKeyInfo DER or an X9.63 point with full validation, export
///   SPKI DER, the X9.63 point and a JWK, verify P1363 and DER signatures.
public enum P256 {
    /// Byte length of a coordinate, of `r` and of `s`.
    public static let coordinateByteCount = 32
    /// Byte length of an IEEE P1363 signature (`r‖s`).
    public static let signatureByteCount = 64
    /// Byte length of an uncompressed X9.63 point (`04‖x‖y`).
    public static let x963ByteCount = 65
    /// The longest DER ECDSA-Sig-Value for P-256: SEQUENCE of two 33-byte INTEGERs.
    static let maxDERSignatureByteCount = 72

    /// The group order n, big-endian. A valid `r` or `s` is in [1, n-1].
    static let order: [UInt8] = [
        0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xbc, 0xe6, 0xfa, 0xad, 0xa7, 0x17, 0x9e, 0x84, 0xf3, 0xb9, 0xca, 0xc2, 0xfc, 0x63, 0x25, 0x51,
    ]

    /// `SEQUENCE { SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING (0 unused bits) }` up to the
    /// point, for a 65-byte uncompressed point: the only encoding `PublicKey.derRepresentation` writes.
    static let spkiPrefixUncompressed: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01,
        0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]
    /// The same for a 33-byte compressed point.
    static let spkiPrefixCompressed: [UInt8] = [
        0x30, 0x39, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01,
        0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x22, 0x00,
    ]

    /// True when the 32 big-endian bytes at `bytes` are in [1, n-1]. Signatures are public, so a
    /// plain comparison is fine.
    static func isScalarInRange(_ bytes: UnsafeRawBufferPointer) -> Bool {
        precondition(bytes.count == coordinateByteCount)
        guard bytes.contains(where: { $0 != 0 }) else { return false }
        for index in 0..<coordinateByteCount where bytes[index] != order[index] {
            return bytes[index] < order[index]
        }
        return false  // equal to n
    }

    /// DER `ECDSA-Sig-Value` of a P1363 signature, built by libcrypto (`ECDSA_SIG_set0`,
    /// `i2d_ECDSA_SIG`); nil unless it is 64 bytes with `r` and `s` in [1, n-1].
    static func derSignature(p1363 signature: UnsafeRawBufferPointer) -> [UInt8]? {
        guard signature.count == signatureByteCount,
              isScalarInRange(UnsafeRawBufferPointer(rebasing: signature[0..<32])),
              isScalarInRange(UnsafeRawBufferPointer(rebasing: signature[32..<64])),
              let value = ECDSA_SIG_new()
        else { return nil }
        defer { ECDSA_SIG_free(value) }
        let base = signature.baseAddress!.assumingMemoryBound(to: UInt8.self)
        guard let r = BN_bin2bn(base, Int32(coordinateByteCount), nil) else { return nil }
        guard let s = BN_bin2bn(base + coordinateByteCount, Int32(coordinateByteCount), nil) else {
            BN_free(r)
            return nil
        }
        // On success ECDSA_SIG owns r and s.
        guard ECDSA_SIG_set0(value, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        var der = [UInt8](repeating: 0, count: maxDERSignatureByteCount)
        let length = der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(value, &cursor)
        }
        guard length > 0, Int(length) <= maxDERSignatureByteCount else { return nil }
        der.removeLast(maxDERSignatureByteCount - Int(length))
        return der
    }

    /// The P1363 form (`r‖s`, each left-padded to 32 bytes) of a DER signature libcrypto produced.
    static func p1363Signature(der: UnsafeRawBufferPointer) throws -> [UInt8] {
        var cursor = der.baseAddress?.assumingMemoryBound(to: UInt8.self)
        guard let value = d2i_ECDSA_SIG(nil, &cursor, der.count) else { throw CryptoError.fromQueue("d2i_ECDSA_SIG") }
        defer { ECDSA_SIG_free(value) }
        var r: OpaquePointer?
        var s: OpaquePointer?
        ECDSA_SIG_get0(value, &r, &s)
        var out = [UInt8](repeating: 0, count: signatureByteCount)
        let written = out.withUnsafeMutableBufferPointer { buffer in
            (BN_bn2binpad(r, buffer.baseAddress, Int32(coordinateByteCount)),
             BN_bn2binpad(s, buffer.baseAddress! + coordinateByteCount, Int32(coordinateByteCount)))
        }
        guard written == (Int32(coordinateByteCount), Int32(coordinateByteCount)) else {
            throw CryptoError.library("ECDSA signature does not fit P1363 (r or s over 32 bytes)")
        }
        return out
    }
}

/// Owns one EVP_PKEY.
// @unchecked: an EVP_PKEY is immutable once made, and libcrypto allows it to be used from any thread.
final class EVPKey: @unchecked Sendable {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    deinit { EVP_PKEY_free(pointer) }

    /// A context for one operation on this key; the caller frees it.
    func makeContext() throws -> OpaquePointer {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, pointer, nil) else {
            throw CryptoError.fromQueue("EVP_PKEY_CTX_new_from_pkey")
        }
        return context
    }

    /// The key's curve name (`prime256v1`), or nil for a key without a named group.
    var groupName: String? {
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(pointer, &name, name.count, &length) == 1 else {
            ERR_clear_error()
            return nil
        }
        return String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A static string's bytes as a C string pointer that lives forever (OSSL_PARAM keeps name pointers).
func cName(_ text: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
}
