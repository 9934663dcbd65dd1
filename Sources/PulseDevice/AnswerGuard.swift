import Foundation
import PulseAnswerSignature
import PulseCore

/// Applies `AnswerCheck` to the answers of one device folder: reads `answers.json`, learns the server's
/// answer keys when it has to (at enrollment, trust on first use; again on an unknown key id, verified
/// with a key already trusted), checks each answer and writes the new state before the answer is used.
/// A refusal changes nothing on disk: the previous cache stays usable.
public struct AnswerGuard: Sendable {
    public let folder: DeviceFolder
    public let client: SyncClient
    /// True when the caller holds the folder's lock (a sync); otherwise each update takes it.
    let holdsLock: Bool

    public init(folder: DeviceFolder, client: SyncClient, holdsLock: Bool = false) {
        self.folder = folder
        self.client = client
        self.holdsLock = holdsLock
    }

    public func state() throws -> AnswerState { try AnswerState.read(folder.answersURL) }

    /// Asks the server for its answer keys: 404 records that it does not sign (unsigned answers are then
    /// accepted), unless `requireSigned`, which refuses it; a key set is trusted as `AnswerCheck.trustKeySet`
    /// says. Run at enrollment.
    public func learnKeys(requireSigned: Bool = false) throws {
        try update { state in
            let next = try fetchKeys(state)
            if requireSigned && next.signs != true { throw Self.noAnswerKeys(404) }
            return next
        }
    }

    /// Signed answers are required and the server (or a box in front of it) published no answer keys.
    static func noAnswerKeys(_ status: Int) -> DeviceError {
        DeviceError(.integrity, "GET \(AnswerCheck.keySetRoute) answered \(status): the server, or a box in front of it, publishes no "
            + "answer keys, and signed answers are required (--require-signed-answers)")
    }

    /// Checks `response` to `GET target` (as sent, with its query) and records it.
    /// - Parameter sentETag: the If-None-Match sent, which a 304 without an ETag stands for.
    /// - Throws: the refusal (`AnswerRefusal`) naming the rule; `DeviceError` when the state cannot be kept.
    public func accept(_ response: DeviceResponse, to target: String, sentETag: String? = nil) throws {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let answer = ReceivedAnswer(
            route: String(parts[0]), query: parts.count > 1 ? String(parts[1]) : "", device: client.signer?.deviceId ?? "",
            status: response.status, body: response.body, signature: response.header(AnswerSignature.headerName),
            etag: response.header("etag") ?? (response.status == 304 ? sentETag : nil))
        try update { state in
            var state = state
            if state.signs != true, answer.signature != nil {
                // A server first seen unsigned (or never asked) that now signs: learn its keys, trust on first use.
                state = try fetchKeys(state)
            }
            let first = Result { () throws(AnswerRefusal) in try AnswerCheck.check(answer, state: state, keys: try AnswerCheck.trustedKeys(state)) }
            guard case let .failure(refusal) = first, refusal.unknownKey != nil, state.signs == true else { return try first.get() }
            // A key this device has not seen (a rotation): the new key set must verify with a trusted key.
            let learned = try fetchKeys(state)
            return try AnswerCheck.check(answer, state: learned, keys: try AnswerCheck.trustedKeys(learned))
        }
    }

    /// Before a sync with a server that signs (nothing otherwise): reads the key set again, so a key
    /// published ahead of a rotation is trusted while the old key still signs the set (a set that does not
    /// verify is left alone: the trust held stays, and an answer by an unknown key is refused later). The set
    /// is signed anew at least every half answer TTL, so its `iat` is also the recent, verified server time
    /// the freeze rule needs: a proxy that keeps serving a stale manifest is found out once it expired before
    /// that time. `GET /api/sync/time` is not read: it is unsigned, and display-only by the contract.
    func refreshBeforeSync() throws {
        guard try state().signs == true else { return }
        try update { state in
            guard let response = try? client.get(AnswerCheck.keySetRoute), response.status == 200 else { return state }
            return (try? AnswerCheck.trustKeySet(body: response.body, header: response.header(AnswerSignature.headerName), state: state)) ?? state
        }
    }

    private func fetchKeys(_ state: AnswerState) throws -> AnswerState {
        let response = try client.get(AnswerCheck.keySetRoute)
        switch response.status {
        case 404 where state.signs != true:
            var next = state
            next.signs = false
            return next
        case 200:
            return try AnswerCheck.trustKeySet(body: response.body, header: response.header(AnswerSignature.headerName), state: state)
        default:
            throw SyncClient.problem(response, "GET \(AnswerCheck.keySetRoute)")
        }
    }

    /// Read, change, write, under the folder's lock unless the caller holds it; written only when changed.
    private func update(_ change: (AnswerState) throws -> AnswerState) throws {
        let lock = holdsLock ? nil : try folder.lock()
        defer { withExtendedLifetime(lock) {} }
        let before = try state()
        let after = try change(before)
        if after != before { try after.write(folder.answersURL) }
    }
}
