import CMicroHTTPD
import Foundation

// libmicrohttpd's callbacks. `cls` is always the HTTPServer (unretained: it outlives its daemon).

/// Called when a connection opens or closes: its reusable request context lives in between. Admission at the
/// connection limits happens here (see `ConnectionTracker`).
let connectionCallback: MHD_NotifyConnectionCallback = { cls, connection, socketContext, code in
    guard let cls, let socketContext else { return }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    if code == .CONNECTION_NOTIFY_STARTED {
        let context = RequestContext()
        var fd: Int32 = -1
        if let connection {
            context.address = HTTPClientAddress(pulse_mhd_client_address(connection))
            context.client = context.address?.text ?? [0x2d]
            fd = pulse_mhd_connection_fd(connection)
        }
        socketContext.pointee = Unmanaged.passRetained(context).toOpaque()
        if server.tracker.opened(context, fd: fd, now: monotonicNanoseconds()) == .refusedAtOnce {
            // libmicrohttpd has read nothing yet: answer and close; it sees end-of-file and cleans up.
            ServerResponses.write(ServerResponses.busy(context.refusal), to: fd)
            shutdown(fd, Int32(SHUT_RDWR))
        }
    } else if let raw = socketContext.pointee {
        socketContext.pointee = nil
        let context = Unmanaged<RequestContext>.fromOpaque(raw)
        server.tracker.closed(context.takeUnretainedValue())
        context.release()
    }
}

/// Called when a request line has arrived: the raw target (query included, nothing decoded) is kept here.
let uriLogCallback: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?) -> UnsafeMutableRawPointer? = {
    cls, uri, connection in
    let server = Unmanaged<HTTPServer>.fromOpaque(cls!).takeUnretainedValue()
    server.inFlight.add(1, ordering: .relaxed)
    let now = monotonicNanoseconds()
    let connectionContext = connection.flatMap(pulse_mhd_socket_context).map {
        Unmanaged<RequestContext>.fromOpaque($0).takeUnretainedValue()
    }
    if let connectionContext, !connectionContext.inUse {
        if connectionContext.refusal != nil { server.tracker.refusedRequestStarted(connectionContext) }
        connectionContext.begin(target: uri, start: now)
        // The request holds its own reference: safe whatever order libmicrohttpd reports close and completion in.
        return Unmanaged.passRetained(connectionContext).toOpaque()
    }
    let context = RequestContext()
    if let connection {
        context.address = HTTPClientAddress(pulse_mhd_client_address(connection))
        context.client = context.address?.text ?? [0x2d]
    }
    context.refusal = connectionContext?.refusal
    context.begin(target: uri, start: now)
    return Unmanaged.passRetained(context).toOpaque()
}

/// Called once a request is over (sent, failed or timed out): the access log line, then the context is free.
let completedCallback: MHD_RequestCompletedCallback = { cls, _, contextSlot, termination in
    guard let cls, let contextSlot, let raw = contextSlot.pointee else { return }
    contextSlot.pointee = nil
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    let reference = Unmanaged<RequestContext>.fromOpaque(raw)
    let context = reference.takeUnretainedValue()
    let now = monotonicNanoseconds()
    let completed = termination == .REQUEST_TERMINATED_COMPLETED_OK || context.answeredDirectly
    if let stream = context.stream {
        server.tracker.forget(stream)
        context.bodyBytes = stream.bytesSent
        stream.requestEnded(completed: completed)
        context.stream = nil
    }
    if let deferred = context.deferred {
        server.tracker.forget(deferred)
        context.deferred = nil
    }
    let exchange = HTTPExchange(
        client: context.client, method: context.methodText, target: context.target, status: context.status,
        bodyBytes: context.bodyBytes, durationNanoseconds: now &- context.start,
        note: context.responded ? context.note : "refused", completed: completed)
    server.responder.finished(exchange)
    context.inUse = false
    context.phase.store(ConnectionPhase.keepAlive(since: now), ordering: .relaxed)
    server.inFlight.subtract(1, ordering: .relaxed)
    reference.release()
}

/// The access handler. libmicrohttpd calls it first when the headers are in, then once per piece of request
/// body, then once more with no data (and again after a suspended connection is resumed). Problems with the
/// head are answered on the first call (libmicrohttpd then closes the connection, which is what they need);
/// answers are queued on the last call: queuing them on the first makes libmicrohttpd close keep-alive
/// connections.
let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, version, uploadData, uploadSize, contextSlot in
    guard let cls, let connection, let contextSlot, let raw = contextSlot.pointee else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    let context = Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
    if !context.headersSeen {
        context.headersSeen = true
        return server.begin(connection, context, url: url, method: method, version: version)
    }
    if context.responded {
        uploadSize?.pointee = 0
        return .YES
    }
    if let uploadSize, uploadSize.pointee > 0 {
        defer { uploadSize.pointee = 0 }
        return server.receive(context, uploadData, count: uploadSize.pointee)
    }
    return server.finish(connection, context)
}

extension HTTPServer {
    /// The first call: checks the head, refuses what must be refused, and otherwise waits for the body.
    func begin(
        _ connection: OpaquePointer, _ context: RequestContext,
        url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?
    ) -> MHD_Result {
        guard let url, let method, let version else { return .NO }
        context.method = Self.parseMethod(method)
        context.methodText = context.method.description
        let headerSize = pulse_mhd_header_size(connection)
        let head = RequestHead.check(
            connection, headerSize: headerSize, method: method, target: url, targetLength: context.target.count,
            version: version, targetBytes: context.target, wanted: wantedHeaders)
        let requestLine = UnsafeRawPointer(version) + 10 - UnsafeRawPointer(method)
        if let answer = tooLargeToAnswer(headerSize, context, head, requestLine: requestLine) {
            return answerDirectly(connection, context, answer.bytes, status: answer.status, note: head.problem ?? "too-large")
        }
        if let problem = head.problem { return queue(connection, context, HTTPResponse(errors.badRequest, note: problem)) }
        context.headers = head.headers
        if head.hasBody {
            let limit = configuration.maxRequestBodyBytes
            if limit == 0 || (head.contentLength ?? 0) > limit {
                return queue(connection, context, HTTPResponse(errors.bodyTooLarge, note: "body-too-large"))
            }
            context.body = []
            // A client may announce a body and never send it: reserve no more than 64 KB up front.
            context.body!.reserveCapacity(min(head.contentLength ?? 4096, limit, 64 << 10))
        } else {
            context.phase.store(ConnectionPhase.busy, ordering: .relaxed)
        }
        return .YES
    }

    /// A piece of the body: kept up to the limit, then read and dropped (only the end of the body allows an
    /// answer); a client that keeps sending far beyond it is disconnected.
    func receive(_ context: RequestContext, _ data: UnsafePointer<CChar>?, count: Int) -> MHD_Result {
        let limit = configuration.maxRequestBodyBytes
        let kept = context.body?.count ?? 0
        let room = max(0, limit - kept)
        if let data, room > 0 {
            context.body!.append(contentsOf: UnsafeRawBufferPointer(start: data, count: min(room, count)))
        }
        context.bodyOverrun += max(0, count - room)
        return context.bodyOverrun > max(limit, 64 << 10) ? .NO : .YES
    }

    /// The last call (or a call after a resume): asks the responder, or delivers a deferred answer.
    func finish(_ connection: OpaquePointer, _ context: RequestContext) -> MHD_Result {
        if let deferred = context.deferred {
            guard let answer = deferred.answerOrSuspend(connection) else { return .YES }
            tracker.forget(deferred)
            context.deferred = nil
            return queue(connection, context, answer)
        }
        context.phase.store(ConnectionPhase.busy, ordering: .relaxed)
        if let refusal = context.refusal { return queue(connection, context, errors.refused(refusal)) }
        if context.bodyOverrun > 0 { return queue(connection, context, HTTPResponse(errors.bodyTooLarge, note: "body-too-large")) }
        let request = HTTPRequest(
            method: context.method, target: context.target, headers: context.headers, client: context.address, body: context.body)
        let response = responder.respond(to: request)
        guard let deferred = response.deferred else { return queue(connection, context, response) }
        if !tracker.track(deferred) { deferred.abandon(with: HTTPResponse(errors.unavailable, note: "stopping")) }
        context.deferred = deferred
        return finish(connection, context)
    }

    /// Queues `response` for the request.
    func queue(_ connection: OpaquePointer, _ context: RequestContext, _ response: HTTPResponse) -> MHD_Result {
        context.responded = true
        context.status = response.status
        context.note = response.note
        let hasBody = context.method != .head && response.status != 304 && response.status != 204
        context.bodyBytes = hasBody ? response.body.count : 0
        if let shared = response.shared {
            guard let native = shared.native else {
                return answerDirectly(connection, context, ServerResponses.outOfMemory, status: 503, note: "out-of-memory")
            }
            return MHD_queue_response(connection, UInt32(response.status), native)
        }
        if case let .stream(stream) = response.body {
            context.stream = stream
            stream.attach(connection)
            _ = tracker.track(stream)
        }
        guard let native = NativeResponse.make(response) else { return .NO }
        defer { MHD_destroy_response(native) }
        return MHD_queue_response(connection, UInt32(response.status), native)
    }

    /// When the head filled the connection's memory, libmicrohttpd cannot build any response header (it then
    /// closes without a byte): such requests are answered straight on the socket. The estimate: the head,
    /// libmicrohttpd's record per header and query argument, and 1 KB for the answer's headers.
    private func tooLargeToAnswer(
        _ headerSize: Int, _ context: RequestContext, _ head: RequestHead, requestLine: Int
    ) -> (bytes: [UInt8], status: Int)? {
        var records = head.headerCount + 2
        let limit = configuration.connectionMemoryBytes - 1024
        // The usual case in one comparison: even if every other byte of the target started a query argument.
        if headerSize + 64 * (records + context.target.count / 2 + 1) <= limit { return nil }
        if let query = context.target.firstIndex(of: 0x3f) {
            records += context.target[query...].reduce(1) { $1 == 0x26 ? $0 + 1 : $0 }
        }
        guard headerSize + 64 * records > limit else { return nil }
        if head.problem != nil { return (ServerResponses.badRequestRaw, 400) }
        return requestLine * 2 > headerSize ? (ServerResponses.uriTooLong, 414) : (ServerResponses.headersTooLarge, 431)
    }

    /// Writes the answer to the socket and has libmicrohttpd close the connection.
    private func answerDirectly(_ connection: OpaquePointer, _ context: RequestContext, _ bytes: [UInt8], status: Int, note: String) -> MHD_Result {
        ServerResponses.write(bytes, to: pulse_mhd_connection_fd(connection))
        context.responded = true
        context.answeredDirectly = true
        context.status = status
        context.note = note
        context.phase.store(ConnectionPhase.busy, ordering: .relaxed)
        return .NO
    }

    private static func parseMethod(_ method: UnsafePointer<CChar>) -> HTTPMethod {
        if strcmp(method, "GET") == 0 { return .get }
        if strcmp(method, "HEAD") == 0 { return .head }
        if strcmp(method, "POST") == 0 { return .post }
        if strcmp(method, "OPTIONS") == 0 { return .options }
        return .other(String(decoding: UnsafeRawBufferPointer(start: method, count: strlen(method)), as: UTF8.self))
    }
}
