import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// HTTP through URLSession (libcurl underneath on Linux), with a delegate so that answers stream in: a
/// blob goes to its partial file piece by piece (a sync killed mid-blob resumes from there) and an event
/// stream is read as it comes.
///
/// Callers block on their own threads (never Swift's cooperative pool); the delegate runs on one serial
/// queue of URLSession's, which is why `receive` closures must not block on other requests.
public final class URLSessionTransport: NSObject, HTTPTransport, URLSessionDataDelegate, @unchecked Sendable {
    private final class Exchange: @unchecked Sendable {
        let receive: @Sendable (TransportEvent) throws -> Void
        let done = DispatchSemaphore(value: 0)
        /// Set on the delegate queue before `done` is signalled; read after.
        var failure: (any Error)?

        init(_ receive: @escaping @Sendable (TransportEvent) throws -> Void) { self.receive = receive }
    }

    private var session: URLSession!
    private let exchanges = Mutex<[Int: Exchange]>([:])

    /// - Parameters:
    ///   - timeout: seconds of silence before a request fails (an event stream gets a heartbeat every 15 s).
    ///   - connectionsPerHost: parallel connections to one host (blob downloads).
    public init(timeout: TimeInterval = 60, connectionsPerHost: Int = 8) {
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = 7 * 24 * 3600
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpMaximumConnectionsPerHost = connectionsPerHost
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "pulse-device-http"
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
    }

    /// Ends the session (URLSession keeps its delegate until then).
    public func invalidate() { session.invalidateAndCancel() }

    public func exchange(
        _ request: DeviceRequest, cancellation: Cancellation?, _ receive: @escaping @Sendable (TransportEvent) throws -> Void
    ) throws {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        for header in request.headers { urlRequest.addValue(header.value, forHTTPHeaderField: header.name) }
        if let body = request.body { urlRequest.httpBody = Data(body) }
        let exchange = Exchange(receive)
        let task = session.dataTask(with: urlRequest)
        exchanges.withLock { $0[task.taskIdentifier] = exchange }
        let token = cancellation?.onCancel { [weak task] in task?.cancel() }
        task.resume()
        exchange.done.wait()
        if let token { cancellation?.remove(token) }
        exchanges.withLock { _ = $0.removeValue(forKey: task.taskIdentifier) }
        if cancellation?.isCancelled == true { throw CancellationError() }
        if let failure = exchange.failure { throw failure }
    }

    private func exchange(for task: URLSessionTask) -> Exchange? { exchanges.withLock { $0[task.taskIdentifier] } }

    public func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        guard let exchange = exchange(for: dataTask) else { return completionHandler(.cancel) }
        guard let http = response as? HTTPURLResponse else {
            exchange.failure = DeviceError(.network, "\(dataTask.originalRequest?.url?.absoluteString ?? "?"): not an HTTP answer")
            return completionHandler(.cancel)
        }
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields {
            if let key = key as? String, let value = value as? String { headers[key.lowercased()] = value }
        }
        do {
            try exchange.receive(.head(status: http.statusCode, headers: headers))
            completionHandler(.allow)
        } catch {
            exchange.failure = error
            completionHandler(.cancel)
        }
    }

    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let exchange = exchange(for: dataTask), exchange.failure == nil else { return }
        do { try exchange.receive(.data(Array(data))) } catch {
            exchange.failure = error
            dataTask.cancel()
        }
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let exchange = exchange(for: task) else { return }
        if exchange.failure == nil, let error {
            let url = task.originalRequest?.url?.absoluteString ?? "?"
            exchange.failure = DeviceError(.network, "\(task.originalRequest?.httpMethod ?? "GET") \(url): \(Self.reason(error))")
        }
        exchange.done.signal()
    }

    /// libcurl's reason in a few words ("Could not connect to the server.").
    static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        return nsError.localizedDescription
    }
}
