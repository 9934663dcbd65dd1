#if canImport(Glibc)
import Glibc
#endif
import PulseSystem

/// What only tests ask of a raw connection: a send that never waits (a client trickling bytes over many
/// connections), everything until the server falls silent, and whether it has closed already.
extension RawHTTPConnection {
    /// Sends what the socket takes at once, without waiting: the number of bytes sent, 0 when the socket's
    /// buffer is full or the connection is gone (for a client that trickles bytes over many connections).
    public func sendWithoutWaiting(_ bytes: [UInt8]) -> Int {
        guard fd >= 0 else { return 0 }
        let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        return max(sent, 0)
    }

    /// Everything that arrives until nothing more has come for `seconds` (what was read already included):
    /// for checks that a server sent nothing more.
    public func readUntilQuiet(seconds: Double) throws -> [UInt8] {
        guard fd >= 0 else { throw Failure("connection to \(peer) is closed") }
        var bytes = pending
        pending = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while poll(&waiting, 1, Int32(seconds * 1000)) > 0 {
            let got = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if got <= 0 { break }
            bytes += chunk[..<got]
        }
        return bytes
    }

    /// True when the server has closed the connection already, without waiting (nothing is read).
    public func isClosedNow() -> Bool {
        guard fd >= 0 else { return true }
        var byte: UInt8 = 0
        let got = recv(fd, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
        return got == 0 || (got < 0 && errno == ECONNRESET)
    }
}
