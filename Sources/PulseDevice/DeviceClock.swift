import Foundation
import Synchronization

/// The time the device signs with: its own clock plus an offset learned from `GET /api/sync/time` after a
/// `401 staleSignature`. The offset only ever serves the signature's `ts`, and lives in memory: nothing the
/// device decides depends on its own clock or on `/api/sync/time` (unsigned, display-only by the contract).
/// The server alone decides what is released; the freeze rule of signed answers uses only server times the
/// device verified (`AnswerState.verifiedTime`), so a proxy that lies about the time can cost a retry, never
/// lock the device out.
public final class DeviceClock: Sendable {
    private let system: @Sendable () -> Double
    private let offset = Mutex<Double>(0)

    /// - Parameter system: the device's clock in Unix seconds; `skew` seconds are added to it (a test's
    ///   way to play a device whose clock is wrong).
    public init(skew: Double = 0, system: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.system = { system() + skew }
    }

    /// The device's own reading, uncorrected.
    public var local: Double { system() }

    /// The corrected time.
    public var now: Double { system() + offset.withLock { $0 } }

    /// The learned correction, in seconds.
    public var correction: Double { offset.withLock { $0 } }

    /// Learns the offset from a server reading (whole seconds) taken between `sent` and `received`
    /// (local clock): the server's second is assumed to be the middle of the exchange.
    func learn(serverSeconds: Int64, sent: Double, received: Double) {
        let value = Double(serverSeconds) + 0.5 - (sent + received) / 2
        offset.withLock { $0 = value }
    }
}
