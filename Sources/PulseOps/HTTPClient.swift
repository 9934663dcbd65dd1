import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PulseSystem
import Synchronization

/// A response, with header names lowercased.
struct HTTPResponse: Sendable {
    var status: Int
    var headers: [String: String]
    var body: Data
}

/// Blocking HTTP over URLSession. The completion handler runs on URLSession's own queue, so waiting on
/// a semaphore here never starves Swift's cooperative thread pool.
///
/// A request with a body never travels on a connection that carried another request. libcurl (under
/// FoundationNetworking) silently re-sends a request whose reused connection dies before any answer, on a
/// fresh connection; FoundationNetworking cannot rewind a body, so the retry sends what was left of it
/// and then waits, with the socket writable, until the request timeout: a connection reset in the middle
/// of a PUT cost 30 s at a full core (issue 12). On a connection of its own the reset is reported at once
/// (`NSURLErrorNetworkConnectionLost`), and S3Client retries it with the whole body. So requests with a
/// body go through a session of their own each (its pool holds just that connection and dies with it);
/// requests without one (GET, HEAD, DELETE, listings) share one keep-alive session, where a silent
/// re-send is harmless.
final class HTTPClient: Sendable {
    private let shared: URLSession
    let timeout: TimeInterval

    init(timeout: TimeInterval) {
        self.timeout = timeout
        shared = URLSession(configuration: Self.configuration(timeout: timeout))
    }

    deinit { shared.finishTasksAndInvalidate() }

    private static func configuration(timeout: TimeInterval) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout * 10
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpMaximumConnectionsPerHost = 16
        return configuration
    }

    /// Sends `request`; throws the transport error (connection refused, timeout, reset, …) as is.
    func send(_ request: URLRequest) throws -> HTTPResponse {
        guard let body = request.httpBody, !body.isEmpty else { return try send(request, on: shared) }
        var request = request
        request.setValue("close", forHTTPHeaderField: "Connection")
        let session = URLSession(configuration: Self.configuration(timeout: timeout))
        defer { session.finishTasksAndInvalidate() }
        return try send(request, on: session)
    }

    private func send(_ request: URLRequest, on session: URLSession) throws -> HTTPResponse {
        // URLSession answers on its own queue; this thread waits for the answer to be in.
        let result = Condition<Result<HTTPResponse, any Error>?>(nil)
        let task = session.dataTask(with: request) { data, response, error in
            let outcome: Result<HTTPResponse, any Error>
            if let error {
                outcome = .failure(error)
            } else if let http = response as? HTTPURLResponse {
                var headers: [String: String] = [:]
                for (key, value) in http.allHeaderFields {
                    if let key = key as? String, let value = value as? String { headers[key.lowercased()] = value }
                }
                outcome = .success(HTTPResponse(status: http.statusCode, headers: headers, body: data ?? Data()))
            } else {
                outcome = .failure(URLError(.badServerResponse))
            }
            result.withLock(waking: .all) { $0 = outcome }
        }
        task.resume()
        return try result.wait(until: { $0 != nil }) { $0! }.get()
    }
}
