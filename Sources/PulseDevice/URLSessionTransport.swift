import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PulseSystem
import Synchronization

/// HTTP through URLSession (libcurl underneath on Linux), with a delegate so that answers stream in: a
/// blob goes to its partial file piece by piece (a sync killed mid-blob resumes from there) and an event
/// stream is read as it comes.
///
/// Callers block on their own threads (never Swift's cooperative pool); the delegate runs on one serial
/// queue of URLSession's, which is why `receive` closures must not block on other requests.
public final class URLSessionTransport: HTTPTransport, Sendable {
    private let session: URLSession
    private let delegate: Delegate

    /// - Parameters:
    ///   - timeout: seconds of silence before a request fails (an event stream gets a heartbeat every 15 s).
    ///   - connectionsPerHost: parallel connections to one host (blob downloads).
    public init(timeout: TimeInterval = 60, connectionsPerHost: Int = 8) {
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
        delegate = Delegate()
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
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
        delegate.exchanges.withLock { $0[task.taskIdentifier] = exchange }
        let token = cancellation?.onCancel { [weak task] in task?.cancel() }
        task.resume()
        let failure = exchange.waitUntilDone()
        if let token { cancellation?.remove(token) }
        delegate.exchanges.withLock { _ = $0.removeValue(forKey: task.taskIdentifier) }
        if cancellation?.isCancelled == true { throw CancellationError() }
        if let failure { throw failure }
    }

    /// libcurl's reason in a few words ("Could not connect to the server.").
    static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        return nsError.localizedDescription
    }
}

/// One request in flight: what receives its answer, and how it ended.
private final class Exchange: Sendable {
    let receive: @Sendable (TransportEvent) throws -> Void
    /// How it ended: set on the delegate queue (`fail`, `finish`); the requesting thread waits for `done`.
    private let outcome = Condition((failure: (any Error)?.none, done: false))

    init(_ receive: @escaping @Sendable (TransportEvent) throws -> Void) { self.receive = receive }

    /// Keeps `error` unless a failure is already in.
    func fail(_ error: any Error) { outcome.withLock { $0.failure = $0.failure ?? error } }

    var hasFailed: Bool { outcome.withLock { $0.failure != nil } }

    /// The exchange ended (answered, failed or cancelled): wakes the requesting thread.
    func finish() { outcome.withLock(waking: .all) { $0.done = true } }

    /// Waits until `finish()`; the failure, if any.
    func waitUntilDone() -> (any Error)? { outcome.wait(until: { $0.done }) { $0.failure } }
}

/// URLSession's delegate (which it holds until invalidated): hands each task's events to its exchange.
private final class Delegate: NSObject, URLSessionDataDelegate, Sendable {
    let exchanges = Mutex<[Int: Exchange]>([:])

    private func exchange(for task: URLSessionTask) -> Exchange? { exchanges.withLock { $0[task.taskIdentifier] } }

    public func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        guard let exchange = exchange(for: dataTask) else { return completionHandler(.cancel) }
        guard let http = response as? HTTPURLResponse else {
            exchange.fail(DeviceError(.network, "\(dataTask.originalRequest?.url?.absoluteString ?? "?"): not an HTTP answer"))
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
            exchange.fail(error)
            completionHandler(.cancel)
        }
    }

    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let exchange = exchange(for: dataTask), !exchange.hasFailed else { return }
        do { try exchange.receive(.data(Array(data))) } catch {
            exchange.fail(error)
            dataTask.cancel()
        }
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let exchange = exchange(for: task) else { return }
        if let error {
            let url = task.originalRequest?.url?.absoluteString ?? "?"
            exchange.fail(DeviceError(.network, "\(task.originalRequest?.httpMethod ?? "GET") \(url): \(URLSessionTransport.reason(error))"))
        }
        exchange.finish()
    }
}
