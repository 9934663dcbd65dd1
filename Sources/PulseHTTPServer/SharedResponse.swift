import CMicroHTTPD

/// A response prepared once (status, headers and body in a libmicrohttpd response object) and sent to many
/// requests without rebuilding it: the hot path for cached blobs, 304s and fixed error answers.
/// libmicrohttpd counts references to the object, so dropping a `SharedResponse` while it is being sent is safe.
// @unchecked: owns an MHD_Response, set in init and then only read; libmicrohttpd counts its references.
public final class SharedResponse: @unchecked Sendable {
    /// What is sent, for tests and logs. Its body is never `.file` (a descriptor is consumed by one send) or `.stream`.
    public let template: HTTPResponse
    // Set in init, only read afterwards; libmicrohttpd's reference counting is thread-safe. Nil when
    // libmicrohttpd could not allocate it (out of memory): the server then answers 503 instead.
    let native: OpaquePointer?

    /// Prepares `response`. When libmicrohttpd cannot allocate it, each request it is sent to is answered
    /// `503` with `Retry-After: 1` and the connection closed (the server goes on).
    /// - Precondition: its body is not a `.file` or a `.stream`, and it is not deferred.
    public convenience init(_ response: HTTPResponse) {
        self.init(response, allocate: NativeResponse.make)
    }

    /// Prepares `response` with `allocate` (tests pass one that fails as libmicrohttpd does out of memory).
    init(_ response: HTTPResponse, allocate: (HTTPResponse) -> OpaquePointer?) {
        switch response.body {
        case .file, .stream: preconditionFailure("a file or stream body cannot be shared")
        default: precondition(response.deferred == nil, "a deferred response cannot be shared")
        }
        template = response
        native = allocate(response)
    }

    deinit { if let native { MHD_destroy_response(native) } }
}

/// Building libmicrohttpd response objects.
enum NativeResponse {
    /// A new response object for `response` (the caller destroys it), or nil if libmicrohttpd refused.
    static func make(_ response: HTTPResponse) -> OpaquePointer? {
        let native: OpaquePointer?
        switch response.body {
        case .empty:
            native = MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT)
        case let .bytes(bytes):
            native = bytes.withUnsafeBytes {
                MHD_create_response_from_buffer($0.count, UnsafeMutableRawPointer(mutating: $0.baseAddress), .RESPMEM_MUST_COPY)
            }
        case let .buffer(buffer, offset, count):
            precondition(offset >= 0 && count >= 0 && offset + count <= buffer.count, "buffer slice out of range")
            // The response keeps the buffer alive; libmicrohttpd calls `releaseBuffer` when it is done with it.
            let owner = Unmanaged.passRetained(buffer).toOpaque()
            let start = buffer.baseAddress.map { $0 + offset }
            native = MHD_create_response_from_buffer_with_free_callback_cls(count, start, releaseBuffer, owner)
            if native == nil { Unmanaged<ByteBuffer>.fromOpaque(owner).release() }
        case let .file(file, offset, count):
            guard let fd = file.take() else { return nil }
            native = MHD_create_response_from_fd_at_offset64(UInt64(count), fd, UInt64(offset))
            if native == nil { close(fd) }
        case let .stream(stream):
            // The response keeps the stream alive; libmicrohttpd calls `streamRelease` when it is done with it.
            let owner = Unmanaged.passRetained(stream).toOpaque()
            native = MHD_create_response_from_callback(UInt64.max, 2048, streamReader, owner, streamRelease)
            if native == nil { Unmanaged<HTTPEventStream>.fromOpaque(owner).release() }
        }
        guard let native else { return nil }
        for header in response.headers {
            MHD_add_response_header(native, header.name, header.value)
        }
        return native
    }
}

private let releaseBuffer: MHD_ContentReaderFreeCallback = { owner in
    guard let owner else { return }
    Unmanaged<ByteBuffer>.fromOpaque(owner).release()
}
