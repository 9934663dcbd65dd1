import PulseAnswerSignature
import PulseHTTPServer
import PulseServerStorage

extension SyncAPI {
    /// `response` with its `Pulse-Signature` (docs/server.md, "Signed answers") when this server signs; as it
    /// is otherwise. Only 200 and 304 are signed: an error answer never is.
    func signed(
        _ response: HTTPResponse, route: String, query: ArraySlice<UInt8>, device: SyncCache.Device, seq: Int, packageVersion: String? = nil,
        deckVersion: Int? = nil, now: Int64
    ) throws -> HTTPResponse {
        guard let answerSigner, response.status == 200 || response.status == 304 else { return response }
        let binding = AnswerSigner.Binding(
            route: route, query: String(decoding: query, as: UTF8.self), device: device.record.id, status: response.status, seq: seq,
            packageVersion: packageVersion, deckVersion: deckVersion)
        return try answerSigner.signed(response, binding, at: now, generation: try storage.generation())
    }

    /// `GET /api/sync/answer-keys`: `{"keys":[<JWK with signsFrom, retiresAt>, …]}`, every key published now,
    /// itself signed by the key that signs now (route "/api/sync/answer-keys", query and device "", seq the
    /// key set's generation). 404 on a server that does not sign.
    func answerKeys() throws -> HTTPResponse {
        guard let answerSigner else { return HTTPResponse(answers.notFound, "no:answer-keys") }
        let now = seconds(clock())
        let generation = try cache.revalidate()
        let (keys, seq) = AnswerKeyring.published(answerSigner.keyring.keys(at: generation), at: now, ttl: answerSigner.ttl)
        var response = SyncAnswers.json(200, AnswerKeySet.encode(keys) + [0x0a], cacheControl: "public, max-age=60")
        response.note = "answer-keys"
        let binding = AnswerSigner.Binding(route: "/api/sync/answer-keys", query: "", device: "", status: 200, seq: seq)
        return try answerSigner.signed(response, binding, at: now, generation: generation)
    }

    /// The `seq` of a series manifest: the series' import generation above, the sum of its sessions' change
    /// sequences below (a session's advance can change which version of it the series names). Never lower
    /// for a later answer: an import moves the generation, and change sequences only grow.
    func seriesSequence(_ series: SeriesRecord) throws -> Int {
        var sum: Int64 = 0
        for id in series.sessionIds {
            if let session = try cache.session(id) { sum = sum &+ max(0, session.changeSequence) }
        }
        let low = min(sum, Int64(UInt32.max))
        let (high, overflow) = max(0, series.generation).multipliedReportingOverflow(by: 1 << 32)
        return overflow ? Int.max : Int(high | low)
    }
}
