import Foundation
import COpenSSL

/// SHA-256 (FIPS 180-4) over libcrypto.
public enum SHA256 {
    /// Byte length of a digest.
    public static let byteCount = 32

    /// The digest of `data` in one call.
    public static func hash(_ data: some ContiguousBytes) -> [UInt8] {
        data.withUnsafeBytes { hash(buffer: $0) }
    }

    /// The lowercase hex digest of `data`: the name of a content-addressed blob.
    public static func hex(_ data: some ContiguousBytes) -> String {
        Hex.encode(hash(data))
    }

    static func hash(buffer: UnsafeRawBufferPointer) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: byteCount)
        var length: UInt32 = 0
        let ok = digest.withUnsafeMutableBufferPointer { out in
            EVP_Digest(buffer.baseAddress, buffer.count, out.baseAddress, &length, Digests.sha256, nil)
        }
        // EVP_Digest over a fetched SHA-256 cannot fail short of memory exhaustion.
        precondition(ok == 1 && length == 32, "EVP_Digest(SHA-256) failed")
        return digest
    }
}

/// Incremental SHA-256, for data that arrives in pieces (files read in chunks).
public final class SHA256Hasher {
    private let context: OpaquePointer

    public init() {
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, Digests.sha256, nil) == 1 else {
            fatalError("EVP_DigestInit_ex(SHA-256) failed")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Feeds more bytes.
    public func update(_ data: some ContiguousBytes) {
        data.withUnsafeBytes { buffer in
            precondition(EVP_DigestUpdate(context, buffer.baseAddress, buffer.count) == 1)
        }
    }

    /// Feeds the bytes of a buffer (for the wrappers of this module).
    func update(buffer: UnsafeRawBufferPointer) {
        precondition(EVP_DigestUpdate(context, buffer.baseAddress, buffer.count) == 1)
    }

    /// The digest of everything fed so far; the hasher must not be used afterwards.
    public func finalize() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: SHA256.byteCount)
        var length: UInt32 = 0
        precondition(EVP_DigestFinal_ex(context, &digest, &length) == 1 && length == 32)
        return digest
    }
}

/// Algorithms fetched once: an implicit fetch on every call costs a lock and a lookup.
enum Digests {
    nonisolated(unsafe) static let sha256: OpaquePointer = {
        guard let md = EVP_MD_fetch(nil, "SHA256", nil) else { fatalError("libcrypto has no SHA256") }
        return md
    }()
}
