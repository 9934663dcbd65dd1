import CSQLite
import Synchronization

/// The header of the write-ahead log's shared index (the `-shm` file, https://sqlite.org/walformat.html):
/// every commit, by any connection in any process, rewrites it (its change counter, frame count and
/// checksum move), and it is how SQLite itself notices another connection's commit. Compared whole, never
/// interpreted: equal headers mean no commit in between.
public struct WALIndexHeader: Equatable, Sendable {
    // Its 48 bytes.
    private let head: SIMD4<UInt64>
    private let tail: SIMD2<UInt64>

    fileprivate init(_ bytes: UnsafeRawPointer) {
        head = bytes.loadUnaligned(as: SIMD4<UInt64>.self)
        tail = bytes.loadUnaligned(fromByteOffset: 32, as: SIMD2<UInt64>.self)
    }

    /// The index keeps two copies of the header; a writer rewrites the second, then the first.
    fileprivate static let size = 48
}

extension Database {
    /// The WAL index header as it is now: a few loads from the memory SQLite maps for this connection, no
    /// lock, no system call, no transaction. Nil when there is none to read (not in WAL mode, or the index
    /// not created yet) or a writer is rewriting it this instant (its two copies differ): then ask SQLite
    /// (`dataVersion`).
    public func walIndexHeader() -> WALIndexHeader? {
        guard let region = walIndex ?? mapWALIndex() else { return nil }
        // Read the way SQLite does (walIndexTryHdr): the first copy, a barrier, the second copy.
        let first = WALIndexHeader(region)
        atomicMemoryFence(ordering: .acquiring)
        let second = WALIndexHeader(region + WALIndexHeader.size)
        return first == second ? first : nil
    }

    /// Maps the index's first region through this connection's VFS file (`xShmMap`, without extending it):
    /// the mapping SQLite itself reads, valid until the connection closes.
    private func mapWALIndex() -> UnsafeRawPointer? {
        guard writeAheadLog else { return nil }
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(connection.pointer, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK,
              let methods = file?.pointee.pMethods, methods.pointee.iVersion >= 2, let map = methods.pointee.xShmMap
        else { return nil }
        var region: UnsafeMutableRawPointer?
        let pageSize: Int32 = 32768  // WALINDEX_PGSZ, fixed by the file format
        guard map(file, 0, pageSize, 0, &region) == SQLITE_OK, let region else { return nil }
        walIndex = UnsafeRawPointer(region)
        return walIndex
    }
}
