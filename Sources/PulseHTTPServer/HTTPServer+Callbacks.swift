import CMicroHTTPD
import Foundation

// libmicrohttpd's callbacks. `cls` is always the HTTPServer (unretained: it outlives its daemon).

/// Called when a connection opens or closes: its reusable request context lives in between.
let connectionCallback: MHD_NotifyConnectionCallback = { _, connection, socketContext, code in
    guard let socketContext else { return }
    if code == .CONNECTION_NOTIFY_STARTED {
        let context = RequestContext()
        if let connection { context.client = addressText(pulse_mhd_client_address(connection)) }
        socketContext.pointee = Unmanaged.passRetained(context).toOpaque()
    } else if let raw = socketContext.pointee {
        socketContext.pointee = nil
        Unmanaged<RequestContext>.fromOpaque(raw).release()
    }
}

/// Called when a request line has arrived: the raw target (query included, nothing decoded) is kept here.
let uriLogCallback: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?) -> UnsafeMutableRawPointer? = {
    cls, uri, connection in
    let server = Unmanaged<HTTPServer>.fromOpaque(cls!).takeUnretainedValue()
    server.inFlight.add(1, ordering: .relaxed)
    let now = monotonicNanoseconds()
    if let connection, let raw = pulse_mhd_socket_context(connection) {
        let context = Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
        if !context.inUse {
            context.begin(target: uri, start: now)
            // The request holds its own reference: safe whatever order libmicrohttpd reports close and completion in.
            return Unmanaged.passRetained(context).toOpaque()
        }
    }
    let context = RequestContext()
    if let connection { context.client = addressText(pulse_mhd_client_address(connection)) }
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
    let exchange = HTTPExchange(
        client: context.client, method: context.methodText, target: context.target, status: context.status,
        bodyBytes: context.bodyBytes, durationNanoseconds: monotonicNanoseconds() &- context.start,
        note: context.responded ? context.note : "refused",
        completed: termination == .REQUEST_TERMINATED_COMPLETED_OK)
    server.responder.finished(exchange)
    context.inUse = false
    server.inFlight.subtract(1, ordering: .relaxed)
    reference.release()
}

/// The access handler. libmicrohttpd calls it first when the headers are in, then once per piece of request
/// body, then once more with no data. The response is queued on the second call: queuing it on the first
/// makes libmicrohttpd close keep-alive connections.
let accessHandler: MHD_AccessHandlerCallback = { cls, connection, _, method, _, _, uploadSize, contextSlot in
    guard let cls, let connection, let contextSlot, let raw = contextSlot.pointee else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    let context = Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
    if !context.headersSeen {
        context.headersSeen = true
        context.method = parseMethod(method)
        context.methodText = context.method.description
        return .YES
    }
    if context.responded {
        uploadSize?.pointee = 0
        return .YES
    }
    // A request body is not expected on any route: answer now (libmicrohttpd then closes the connection
    // instead of reading the rest of the body).
    uploadSize?.pointee = 0
    return server.answer(connection, context)
}

private func parseMethod(_ method: UnsafePointer<CChar>?) -> HTTPMethod {
    guard let method else { return .other("") }
    if strcmp(method, "GET") == 0 { return .get }
    if strcmp(method, "HEAD") == 0 { return .head }
    return .other(String(cString: method))
}

extension HTTPServer {
    /// Builds the request, asks the responder and queues its response.
    func answer(_ connection: OpaquePointer, _ context: RequestContext) -> MHD_Result {
        var headers = HTTPRequestHeaders()
        for name in configuration.requestHeaders {
            if let value = MHD_lookup_connection_value(connection, .HEADER_KIND, name) {
                headers.append(lowercaseName: name, [UInt8](UnsafeRawBufferPointer(start: value, count: strlen(value))))
            }
        }
        let request = HTTPRequest(method: context.method, target: context.target, headers: headers)
        let response = responder.respond(to: request)
        context.responded = true
        context.status = response.status
        context.note = response.note
        let hasBody = context.method != .head && response.status != 304 && response.status != 204
        context.bodyBytes = hasBody ? response.body.count : 0
        if let shared = response.shared {
            return MHD_queue_response(connection, UInt32(response.status), shared.native)
        }
        guard let native = NativeResponse.make(response) else { return .NO }
        defer { MHD_destroy_response(native) }
        return MHD_queue_response(connection, UInt32(response.status), native)
    }
}
