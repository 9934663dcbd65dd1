import Foundation

/// Immutable bytes in memory that the server can send without copying; the memory is freed when the last
/// owner (a cache entry or a response still being sent) lets go.
// @unchecked: owns raw memory, written only in `init`, then read-only: safe to share between threads.
public final class ByteBuffer: ContiguousBytes, @unchecked Sendable {
    private let storage: UnsafeMutableRawBufferPointer

    public var count: Int { storage.count }

    /// A copy of `bytes`.
    public init(_ bytes: [UInt8]) {
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        bytes.withUnsafeBytes { memory.copyMemory(from: $0) }
        storage = UnsafeMutableRawBufferPointer(rebasing: memory[0..<bytes.count])
    }

    /// The first `count` bytes of `file`, read with pread (so the descriptor's offset does not matter).
    /// - Throws: `SystemError` if reading fails or the file is shorter than `count`.
    public init(readingFrom file: OpenFile, count: Int) throws {
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        var done = 0
        while done < count {
            let got = pread(file.descriptor, memory.baseAddress! + done, count - done, off_t(done))
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else {
                let code = got < 0 ? errno : EIO
                memory.deallocate()
                throw SystemError(operation: "read", path: file.path, code: code)
            }
            done += got
        }
        storage = UnsafeMutableRawBufferPointer(rebasing: memory[0..<count])
    }

    deinit { UnsafeMutableRawBufferPointer(start: storage.baseAddress, count: max(storage.count, 1)).deallocate() }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(storage))
    }

    /// A copy as an array (for tests and small bodies).
    public var bytes: [UInt8] { [UInt8](UnsafeRawBufferPointer(storage)) }

    /// Bytes `range` as an array.
    public subscript(range: Range<Int>) -> [UInt8] { [UInt8](UnsafeRawBufferPointer(rebasing: storage[range])) }

    /// The base address for the server's zero-copy send; only valid while `self` is retained.
    var baseAddress: UnsafeMutableRawPointer? { storage.baseAddress }
}
