#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// An error number from the system (`errno`), shown as the system's text for it ("No space left on device"):
/// the one place in the project that reads that text (`strerror`).
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: Int32

    public init(_ code: Int32) { self.code = code }

    /// The calling thread's `errno` now (read it right after the call that failed).
    public static var current: Errno { Errno(errno) }

    /// The system's text for the code.
    public var description: String { String(cString: strerror(code)) }

    /// ENOENT: no such file or folder.
    public static let noSuchFile = Errno(ENOENT)
    /// EEXIST: something is there already.
    public static let exists = Errno(EEXIST)
    /// ENOTDIR: a part of the path is not a folder.
    public static let notFolder = Errno(ENOTDIR)
    /// EWOULDBLOCK (EAGAIN): it would have to wait (a lock another holds).
    public static let wouldBlock = Errno(EWOULDBLOCK)
    /// EINTR: a signal interrupted the call.
    public static let interrupted = Errno(EINTR)
    /// EACCES: permission denied.
    public static let permissionDenied = Errno(EACCES)
    /// EROFS: a read-only file system.
    public static let readOnlyFileSystem = Errno(EROFS)
    /// ENOSPC: no space left on the device.
    public static let noSpace = Errno(ENOSPC)
    /// EIO: an input/output error.
    public static let ioError = Errno(EIO)
    /// EFBIG: a file too large.
    public static let fileTooLarge = Errno(EFBIG)
    /// EINVAL: an invalid argument (a bad name).
    public static let invalidArgument = Errno(EINVAL)

    /// The errno behind a Foundation error: its POSIX error (or the underlying one), or the errno a Cocoa
    /// file error stands for; nil for any other error.
    public init?(foundation error: any Error) {
        if let error = error as? Errno {
            self = error
            return
        }
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            self.init(Int32(truncatingIfNeeded: underlying.code))
            return
        }
        if nsError.domain == NSPOSIXErrorDomain {
            self.init(Int32(truncatingIfNeeded: nsError.code))
            return
        }
        guard nsError.domain == NSCocoaErrorDomain else { return nil }
        let code: Int32? = switch nsError.code {
        case NSFileNoSuchFileError, NSFileReadNoSuchFileError: ENOENT
        case NSFileReadNoPermissionError, NSFileWriteNoPermissionError: EACCES
        case NSFileWriteVolumeReadOnlyError: EROFS
        case NSFileWriteOutOfSpaceError: ENOSPC
        case NSFileWriteFileExistsError: EEXIST
        case NSFileReadTooLargeError: EFBIG
        case NSFileWriteInvalidFileNameError, NSFileReadInvalidFileNameError: EINVAL
        default: nil
        }
        guard let code else { return nil }
        self.init(code)
    }

    /// The system's reason behind an error ("No space left on device"), not Foundation's prose ("The operation
    /// could not be completed. The volume is read only."), which says neither what failed nor why in the
    /// terms of the system.
    public static func describe(_ error: any Error) -> String {
        if let error = error as? PathError { return error.errno.description }
        if let errno = Errno(foundation: error) { return errno.description }
        let text = (error as NSError).localizedDescription
        let prefix = "The operation could not be completed. "
        return text.hasPrefix(prefix) ? String(text.dropFirst(prefix.count)) : text
    }
}
