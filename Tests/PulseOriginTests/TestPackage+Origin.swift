import Foundation
import Glibc
import PulseTestSupport
@testable import PulseOrigin

/// What only the origin's tests ask of a package: an origin serving its public part, and the file clock.
extension TestPackage {
    /// An origin for this package's public part (in process, no access log).
    func origin(
        _ configure: (inout OriginConfiguration) -> Void = { _ in }, alarms: AlarmLog = AlarmLog(),
        willHash: (@Sendable () -> Void)? = nil
    ) throws -> Origin {
        var configuration = OriginConfiguration(packageRoot: publicRoot)
        configure(&configuration)
        return try Origin(configuration: configuration, accessLog: nil, alarm: { alarms.append($0) }, willHash: willHash)
    }

    /// Returns once the kernel's clock for file times has moved past `time` (it ticks every few milliseconds), so
    /// that a change made next gets a later change time: creates a scratch file until its change time is later.
    static func waitForClockTick(after time: timespec) throws {
        let folder = try TestFolder()
        let scratch = folder.path("tick")
        for _ in 0..<10_000 {
            let fd = open(scratch, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
            _ = Glibc.write(fd, "x", 1)
            close(fd)
            var info = stat()
            stat(scratch, &info)
            if info.st_ctim.tv_sec > time.tv_sec || (info.st_ctim.tv_sec == time.tv_sec && info.st_ctim.tv_nsec > time.tv_nsec) { return }
            usleep(500)
        }
        throw CocoaError(.fileWriteUnknown)
    }
}

/// Collects the origin's loud messages.
final class AlarmLog: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []
    func append(_ message: String) { lock.withLock { messages.append(message) } }
    var all: [String] { lock.withLock { messages } }
}
