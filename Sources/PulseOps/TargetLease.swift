import Foundation
import PulseCore
import PulseCrypto
import PulseSystem

/// The right to change a target, held by one push or gc at a time (issue 12: a gc that ran while a push
/// re-used an old blob deleted it under the push's feet).
///
/// A push holds it from the listing that decides what the target already has until its index.json is
/// written; a gc from the reading of index.json until its last delete. On S3 it is an object,
/// `.pulse-lease`, created with `If-None-Match: *`, renewed with `If-Match` while its holder works and
/// broken only once it has lapsed (`S3Lease`); on a folder an flock on `.lock`, which the kernel
/// releases when its holder exits, also on `kill -9` (`FolderLease`).
public protocol TargetLease: AnyObject, Sendable {
    /// Throws if the lease is no longer held (it lapsed while this process stalled, and another took
    /// it): called before every change that relies on it. Cheap: it asks the store only when the last
    /// renewal is getting old.
    func confirm() throws
    /// Renews the lease now and throws if that shows it is no longer held: before a commit point
    /// (index.json), where one request buys certainty.
    func renew() throws
    /// Gives the lease up. Errors are ignored: an S3 lease left behind lapses on its own.
    func release()
}

/// Who holds a lease: written into it, shown to whoever finds it taken.
struct LeaseHolder: Equatable, Sendable {
    /// `push` or `gc`.
    var operation: String
    /// Random, one per acquisition: tells this holder's lease from anyone else's.
    var owner: String
    var host: String
    var pid: Int32
    /// When the holder took it (its own clock, for people to read).
    var started: String
    /// Seconds after its last renewal (the store's clock) that the lease lapses.
    var ttl: Int
    var renewals = 0

    static func new(operation: String, ttl: Int) throws -> LeaseHolder {
        LeaseHolder(
            operation: operation, owner: Hex.encode(try SecureRandom.bytes(16)), host: ProcessInfo.processInfo.hostName,
            pid: SystemProcess.currentID, started: Timestamp.string(Date()), ttl: ttl)
    }

    var bytes: Data {
        Data(JSONValue.object([
            "operation": .string(operation), "owner": .string(owner), "host": .string(host), "pid": .int(Int(pid)),
            "started": .string(started), "ttlSeconds": .int(ttl), "renewals": .int(renewals),
        ]).prettyBytes)
    }

    init(operation: String, owner: String, host: String, pid: Int32, started: String, ttl: Int, renewals: Int = 0) {
        self.operation = operation
        self.owner = owner
        self.host = host
        self.pid = pid
        self.started = started
        self.ttl = ttl
        self.renewals = renewals
    }

    /// Parses a lease's content; nil if it is not one (then it is judged by its age alone).
    init?(_ data: Data) {
        guard let json = try? JSONValue.parse(data), let operation = json["operation"]?.stringValue,
              let owner = json["owner"]?.stringValue, let host = json["host"]?.stringValue,
              let pid = json["pid"]?.intValue, let started = json["started"]?.stringValue,
              let ttl = json["ttlSeconds"]?.intValue else { return nil }
        self.init(operation: operation, owner: owner, host: host, pid: Int32(clamping: pid), started: started, ttl: ttl,
                  renewals: json["renewals"]?.intValue ?? 0)
    }

    /// The holder is a process on this machine that no longer exists (killed before it could release).
    var isDeadLocalProcess: Bool {
        host == ProcessInfo.processInfo.hostName && SystemProcess.isGone(pid)
    }

    /// `a push on host vm (pid 4242) since 2026-12-01T14:00:00Z`
    var summary: String { "a \(operation) on host \(host) (pid \(pid)) since \(started)" }
}

/// Polls `attempt` until it returns a lease or `wait` has passed: 0.5 s, 1 s, 2 s … between tries, at
/// most 5 s. `attempt` returns nil while the lease is held elsewhere.
func retryingLease(wait: TimeInterval, _ attempt: () throws -> (any TargetLease)?, busy: () -> OpsError) throws -> any TargetLease {
    let deadline = Date().addingTimeInterval(wait)
    var pause = 0.5
    while true {
        if let lease = try attempt() { return lease }
        let left = deadline.timeIntervalSinceNow
        guard left > 0 else { throw busy() }
        Thread.sleep(forTimeInterval: min(pause, left))
        pause = min(pause * 2, 5)
    }
}
