import Foundation
import PulseSystem
import PulseTestSupport
import Testing

@Suite struct ErrnoTests {
    @Test func isTheSystemsText() {
        #expect(Errno.noSuchFile.description == "No such file or directory")
        #expect(Errno.noSpace.description == "No space left on device")
        #expect(Errno(EACCES) == .permissionDenied)
        #expect("\(PathError("rename", path: "/x/y", errno: .readOnlyFileSystem))" == "/x/y: rename: Read-only file system")
    }

    @Test func isReadRightAfterTheFailedCall() throws {
        let scratch = try TestFolder()
        #expect(throws: PathError("stat", path: scratch.path("missing"), errno: .noSuchFile)) { try FileInfo.of(scratch.path("missing")) }
        try scratch.write("file", "x")
        #expect(throws: PathError("stat", path: scratch.path("file/below"), errno: .notFolder)) { try FileInfo.of(scratch.path("file/below")) }
    }

    /// Foundation's errors in the system's words, never "The operation could not be completed. …".
    @Test func describesFoundationErrorsInTheSystemsWords() throws {
        #expect(Errno.describe(CocoaError(.fileWriteVolumeReadOnly)) == "Read-only file system")
        #expect(Errno.describe(CocoaError(.fileWriteOutOfSpace)) == "No space left on device")
        #expect(Errno.describe(CocoaError(.fileWriteNoPermission)) == "Permission denied")
        #expect(Errno.describe(CocoaError(.fileReadNoSuchFile)) == "No such file or directory")
        #expect(!Errno.describe(CocoaError(.fileWriteUnknown)).hasPrefix("The operation could not be completed"))
        #expect(Errno.describe(NSError(domain: NSPOSIXErrorDomain, code: Int(EROFS))) == "Read-only file system")
        let wrapped = NSError(domain: NSCocoaErrorDomain, code: 512, userInfo: [NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(ENOSPC))])
        #expect(Errno(foundation: wrapped) == .noSpace)
        #expect(Errno(foundation: URLError(.timedOut)) == nil)
        #expect(Errno.describe(PathError("write", path: "/x", errno: .ioError)) == "Input/output error")
        // A real one: Foundation reading a folder that is not there.
        let scratch = try TestFolder()
        #expect(throws: (any Error).self) { try Data(contentsOf: URL(fileURLWithPath: scratch.path("missing"))) }
        do { _ = try Data(contentsOf: URL(fileURLWithPath: scratch.path("missing"))) } catch {
            #expect(Errno.describe(error) == "No such file or directory")
        }
    }
}
