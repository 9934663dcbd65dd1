import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// A response, with header names lowercased.
struct HTTPResponse: Sendable {
    var status: Int
    var headers: [String: String]
    var body: Data
}

/// Blocking HTTP over URLSession. The completion handler runs on URLSession's own queue, so waiting on
/// a semaphore here never starves Swift's cooperative thread pool.
final class HTTPClient: Sendable {
    private let session: URLSession

    init(timeout: TimeInterval) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout * 10
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpMaximumConnectionsPerHost = 16
        session = URLSession(configuration: configuration)
    }

    deinit { session.finishTasksAndInvalidate() }

    /// Sends `request`; throws the transport error (connection refused, timeout, …) as `URLError`.
    func send(_ request: URLRequest) throws -> HTTPResponse {
        let result = Mutex<Result<HTTPResponse, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
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
            result.withLock { $0 = outcome }
            done.signal()
        }
        task.resume()
        done.wait()
        return try result.withLock { $0! }.get()
    }
}
