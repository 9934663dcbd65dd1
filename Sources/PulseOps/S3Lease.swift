import Foundation
import PulseSystem
import Synchronization

/// A lease on an S3 target: the object `<prefix>/.pulse-lease`, holding its `LeaseHolder`.
///
/// - Taken with a conditional create (`If-None-Match: *`), then a second identical create that must fail:
///   a store that ignores the condition (and would let two holders in) is refused.
/// - Renewed every `ttl / 4` on a thread of its own with `If-Match: <its ETag>` (each renewal changes
///   the content, so the ETag too). `confirm()` renews first when the last success is older than
///   `ttl / 2`; a renewal answered 412 means someone took the lease: it is lost.
/// - Judged lapsed when, by the store's own clock (the `Date` of the answer against the object's
///   `Last-Modified`), it was last renewed more than its `ttl` ago, or when its holder is a process
///   of this machine that no longer exists. Only then is it taken over, with `If-Match` on exactly the
///   lapsed object, so two takers never both win.
/// - Released with a delete conditional on its ETag: never someone else's.
final class S3Lease: TargetLease {
    let client: S3Client
    let key: String
    /// `s3://bucket/prefix/.pulse-lease`, how errors name it.
    let name: String
    private struct State {
        var holder: LeaseHolder
        var etag: String
        var confirmedAt: ContinuousClock.Instant
        var lost: String?
    }
    private let state: Mutex<State>
    /// The renewal thread's: told to stop (`release`), and then stopped.
    private let renewals = Condition((stop: false, stopped: false))
    private let released = Atomic(false)

    private init(client: S3Client, key: String, holder: LeaseHolder, etag: String, confirmedAt: ContinuousClock.Instant) {
        self.client = client
        self.key = key
        self.name = client.name(key)
        self.state = Mutex(State(holder: holder, etag: etag, confirmedAt: confirmedAt))
        let interval = Double(holder.ttl) / 4
        Thread { [self] in
            while !renewals.wait(until: { $0.stop }, timeout: interval, { $0.stop }) {
                state.withLock { renew(&$0) }
            }
            renewals.withLock(waking: .all) { $0.stopped = true }
        }.start()
    }

    /// Takes the lease at `key` for `operation`, waiting up to `wait` seconds while another holds it.
    static func acquire(client: S3Client, key: String, operation: String, ttl: Int, wait: TimeInterval) throws -> S3Lease {
        var seen: (holder: LeaseHolder?, renewedAgo: TimeInterval?)?
        let lease = try retryingLease(wait: wait, {
            try attempt(client: client, key: key, operation: operation, ttl: ttl) { seen = $0 }
        }, busy: {
            let who = seen?.holder?.summary ?? "another push or gc (unreadable lease)"
            let ago = seen?.renewedAgo.map { ", last renewed \(Int($0)) s ago" } ?? ""
            let ttl = seen?.holder?.ttl ?? ttl
            return OpsError(.busy, client.name(key), "held by \(who)\(ago); it lapses \(ttl) s after its last renewal. "
                + "Run again when it is done, or wait for it with --wait 10m")
        })
        return lease as! S3Lease
    }

    private static func attempt(
        client: S3Client, key: String, operation: String, ttl: Int, seen: ((holder: LeaseHolder?, renewedAgo: TimeInterval?)) -> Void
    ) throws -> S3Lease? {
        let holder = try LeaseHolder.new(operation: operation, ttl: ttl)
        let started = ContinuousClock.now
        switch try write(client, key, holder, .absent) {
        case let .stored(etag):
            if case .stored = try write(client, key, holder, .absent) {
                _ = try? client.delete(key)
                throw OpsError(.failure, client.name(key), "the store ignores If-None-Match (conditional writes), so push and gc "
                    + "could not keep each other out; use a store that honours it (AWS S3, MinIO, Cloudflare R2, …)")
            }
            return S3Lease(client: client, key: key, holder: holder, etag: etag, confirmedAt: started)
        case .preconditionFailed:
            guard let existing = try client.getObject(key) else { return try attempt(client: client, key: key, operation: operation, ttl: ttl, seen: seen) }
            let other = LeaseHolder(existing.body)
            // Our own create, stored, whose answer was lost and whose retry met it.
            if other?.owner == holder.owner, let etag = existing.etag {
                return S3Lease(client: client, key: key, holder: holder, etag: etag, confirmedAt: started)
            }
            let age = existing.lastModified.map { (existing.serverDate ?? Date()).timeIntervalSince($0) }
            let lapsed = age.map { $0 >= Double(other?.ttl ?? ttl) } ?? false
            if lapsed || other?.isDeadLocalProcess == true, let etag = existing.etag {
                if case let .stored(newTag) = try write(client, key, holder, .matches(etag)) {
                    return S3Lease(client: client, key: key, holder: holder, etag: newTag, confirmedAt: started)
                }
                return nil
            }
            seen((other, age))
            return nil
        }
    }

    private static func write(_ client: S3Client, _ key: String, _ holder: LeaseHolder, _ condition: S3Client.Condition) throws -> S3Client.PutOutcome {
        try client.put(key, body: holder.bytes, contentType: "application/json", cacheControl: "no-store", condition: condition)
    }

    /// One renewal, with the state locked (so renewals never race each other into a false 412).
    private func renew(_ state: inout State) {
        guard state.lost == nil else { return }
        var holder = state.holder
        holder.renewals += 1
        let started = ContinuousClock.now
        do {
            switch try Self.write(client, key, holder, .matches(state.etag)) {
            case let .stored(etag):
                state.holder = holder
                state.etag = etag
                state.confirmedAt = started
            case .preconditionFailed:
                // Our renewal may have been stored with its answer lost, its retry then meeting it.
                if let current = try client.getObject(key), LeaseHolder(current.body)?.owner == holder.owner, let etag = current.etag {
                    state.holder = holder
                    state.etag = etag
                    state.confirmedAt = started
                } else {
                    state.lost = "lost the lease: it lapsed while this process stalled and another push or gc took it; "
                        + "stopped before changing anything more"
                }
            }
        } catch {
            // Unreachable for now: the next renewal tries again; confirm() fails once the last success is too old.
        }
    }

    func confirm() throws { try check(renewing: false) }

    func renew() throws { try check(renewing: true) }

    private func check(renewing: Bool) throws {
        try state.withLock { state in
            if state.lost == nil, renewing || ContinuousClock.now - state.confirmedAt > .seconds(Double(state.holder.ttl) / 2) { renew(&state) }
            if let lost = state.lost { throw OpsError(.failure, name, lost) }
            guard ContinuousClock.now - state.confirmedAt <= .seconds(Double(state.holder.ttl) / 2) else {
                throw OpsError(.failure, name, "cannot renew the lease (the store does not answer); stopped before changing anything more")
            }
        }
    }

    func release() {
        guard !released.exchange(true, ordering: .relaxed) else { return }
        renewals.withLock(waking: .all) { $0.stop = true }
        renewals.wait(until: { $0.stopped }) { _ in }
        let etag = state.withLock { $0.lost == nil ? $0.etag : nil }
        if let etag { _ = try? client.delete(key, ifMatch: etag) }
    }
}
