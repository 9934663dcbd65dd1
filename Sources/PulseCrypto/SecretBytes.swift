import COpenSSL
import Foundation

/// Key material held in memory that is wiped (`OPENSSL_cleanse`) when the last reference goes away,
/// and that never prints: `description`, `debugDescription` and reflection all say `<secret: N bytes>`.
///
/// Swift arrays may be copied by the runtime at will, so a secret that must not linger is kept here
/// instead: one heap allocation, never resized, never copied by value semantics (it is a class).
/// Read it through `withUnsafeBytes`; a caller that copies the bytes out into an `Array` owns that copy.
// @unchecked: owns raw memory, written only in `init` (and wiped in `deinit`), otherwise only read.
public final class SecretBytes: @unchecked Sendable, ContiguousBytes, CustomStringConvertible,
    CustomDebugStringConvertible, CustomReflectable
{
    private let storage: UnsafeMutableRawBufferPointer

    /// The number of bytes.
    public var count: Int { storage.count }

    /// Takes a copy of `bytes`. The caller should drop (or wipe) its own copy.
    public init(_ bytes: some ContiguousBytes) {
        storage = bytes.withUnsafeBytes { source in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(source.count, 1), alignment: 16)
            if let base = source.baseAddress, source.count > 0 { buffer.baseAddress!.copyMemory(from: base, byteCount: source.count) }
            return UnsafeMutableRawBufferPointer(rebasing: buffer[0..<source.count])
        }
    }

    /// `count` bytes from libcrypto's DRBG.
    public static func random(count: Int) throws -> SecretBytes {
        let secret = SecretBytes(zeroedCount: count)
        try check(RAND_bytes(secret.storage.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(count)), "RAND_bytes")
        return secret
    }

    /// `count` bytes written by `fill` straight into the (zeroed) storage: for derivations in this module,
    /// so their output never passes through memory that is not wiped.
    convenience init(count: Int, fill: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        self.init(zeroedCount: count)
        try fill(storage)
    }

    private init(zeroedCount count: Int) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        storage = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
    }

    deinit {
        if let base = storage.baseAddress {
            OPENSSL_cleanse(base, storage.count)
            base.deallocate()
        }
    }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(storage))
    }

    /// Constant-time equality (for tests and for comparing tokens).
    public func isEqual(to other: some ContiguousBytes) -> Bool {
        withUnsafeBytes { mine in
            other.withUnsafeBytes { theirs in
                mine.count == theirs.count && (mine.isEmpty || CRYPTO_memcmp(mine.baseAddress!, theirs.baseAddress!, mine.count) == 0)
            }
        }
    }

    public var description: String { "<secret: \(count) bytes>" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }
}
