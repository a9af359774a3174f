import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP request the client makes.
public struct TransportRequest: Hashable, Sendable {
    public var method: String
    public var url: URL
    public var headers: [String: String]
    public var body: Data?
    /// The whole request's deadline, connecting and reading the last byte included (not an
    /// idle timeout: a server sending a byte every 10 s does not keep it going).
    public var timeout: TimeInterval
    /// The most body bytes the answer may have; a longer one (by its `Content-Length`, or by
    /// counting as it arrives) is abandoned unread and `send` throws `TransportError.bodyTooLarge`.
    /// nil: no bound.
    public var maximumBodyBytes: Int?
    /// Whether it may go over a constrained network (Low Data Mode, on Apple's systems):
    /// telemetry may wait for another network, a manifest may not.
    public var allowsConstrainedNetwork: Bool

    public init(method: String = "GET", url: URL, headers: [String: String] = [:], body: Data? = nil, timeout: TimeInterval = 30,
                maximumBodyBytes: Int? = nil, allowsConstrainedNetwork: Bool = true) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maximumBodyBytes = maximumBodyBytes
        self.allowsConstrainedNetwork = allowsConstrainedNetwork
    }
}

/// Why a transport gave up on an answer that was arriving.
public enum TransportError: Error, Hashable, Sendable {
    /// The body was longer than `TransportRequest.maximumBodyBytes`; the rest was not read.
    case bodyTooLarge(limit: Int)
    /// The whole request took longer than `TransportRequest.timeout`.
    case deadlineExceeded(seconds: TimeInterval)
}

/// Its answer. Header names are lowercased.
public struct TransportResponse: Hashable, Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
    }

    /// `Retry-After` in seconds, from delay-seconds or an HTTP date (RFC 9110 §10.2.3); nil if absent or unreadable.
    public func retryAfter(now: Date = Date()) -> TimeInterval? {
        guard let value = headers["retry-after"]?.trimmingCharacters(in: .whitespaces) else { return nil }
        if !value.isEmpty, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            // delay-seconds; more digits than an Int holds is still "later than any bound".
            return Int(value).map(TimeInterval.init) ?? .greatestFiniteMagnitude
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        guard let date = formatter.date(from: value) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}

/// How the client talks HTTP: `URLSessionTransport` in an app, anything in a test.
public protocol Transport: Sendable {
    /// The server's answer, whatever its status; throws only when there is none (no network, timeout).
    func send(_ request: TransportRequest) async throws -> TransportResponse
}

/// The transport of an app: one `URLSession` (ephemeral by default — the client keeps its
/// own cache, and a manifest must not be answered from a stale URL cache), whose delegate
/// reads each answer as it arrives: a body past `maximumBodyBytes` is cancelled at once (by
/// its `Content-Length`, else as the bytes come), the whole request has one deadline, and
/// cancelling the calling task cancels the request.
public final class URLSessionTransport: Transport, @unchecked Sendable {
    private let session: URLSession
    private let reader: Reader

    public init(configuration: URLSessionConfiguration = .ephemeral) {
        reader = Reader()
        session = URLSession(configuration: configuration, delegate: reader, delegateQueue: nil)
    }

    deinit {
        // Nothing of this transport's is awaited any more (each send holds it while it runs).
        session.invalidateAndCancel()
    }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        // URLSession's own timeout is an idle one, set past the deadline: the deadline ends a request first.
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: request.timeout + 5)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        #if canImport(Darwin)
        urlRequest.allowsConstrainedNetworkAccess = request.allowsConstrainedNetwork
        #endif
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        let task = session.dataTask(with: urlRequest)
        let exchange = Exchange(task: task, limit: request.maximumBodyBytes, origin: request.url)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                // Cancelled before it began: never sent.
                guard exchange.start(continuation) else { return }
                reader.add(exchange)
                let deadline = DispatchWorkItem { exchange.end(.failure(TransportError.deadlineExceeded(seconds: request.timeout))) }
                exchange.deadline = deadline
                DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(Sleep.nanoseconds(request.timeout))), execute: deadline)
                task.resume()
            }
        } onCancel: {
            exchange.end(.failure(CancellationError()))
        }
    }

    /// One request's answer as it arrives; the first ending wins, once, and cancels the task.
    final class Exchange: @unchecked Sendable {
        let task: URLSessionDataTask
        let limit: Int?
        /// Where the request went: a redirect elsewhere is not followed (the token and a
        /// batch would go with it); the redirect is the answer.
        let origin: URL
        /// The deadline's work, cancelled when the exchange ends first.
        var deadline: DispatchWorkItem? {
            get { lock.withLock { _deadline } }
            set { lock.withLock { _deadline = newValue } }
        }
        private var _deadline: DispatchWorkItem?
        private let lock = NSLock()
        private var continuation: CheckedContinuation<TransportResponse, any Error>?
        private var response: HTTPURLResponse?
        private var body = Data()
        private var ended = false

        init(task: URLSessionDataTask, limit: Int?, origin: URL) {
            self.task = task
            self.limit = limit
            self.origin = origin
        }

        /// False when it ended before it began (cancelled): the continuation is resumed, and
        /// the request must not be sent.
        func start(_ continuation: CheckedContinuation<TransportResponse, any Error>) -> Bool {
            let endedFirst = lock.withLock { () -> Bool in
                if ended { return true }
                self.continuation = continuation
                return false
            }
            if endedFirst { continuation.resume(throwing: CancellationError()) }
            return !endedFirst
        }

        /// Whether a redirect to `url` stays with the origin (scheme, host and port).
        func allowsRedirect(to url: URL?) -> Bool {
            guard let url else { return false }
            return url.scheme?.lowercased() == origin.scheme?.lowercased() && url.host?.lowercased() == origin.host?.lowercased()
                && url.port == origin.port
        }

        /// The head: refused unread when its `Content-Length` is over the limit.
        func received(_ response: URLResponse) -> Bool {
            guard let http = response as? HTTPURLResponse else {
                end(.failure(URLError(.badServerResponse)))
                return false
            }
            if let limit, http.expectedContentLength > Int64(limit) {
                end(.failure(TransportError.bodyTooLarge(limit: limit)))
                return false
            }
            lock.withLock { self.response = http }
            return true
        }

        func received(_ data: Data) {
            let over = lock.withLock { () -> Bool in
                guard !ended else { return false }
                body.append(data)
                return limit.map { body.count > $0 } ?? false
            }
            if over, let limit { end(.failure(TransportError.bodyTooLarge(limit: limit))) }
        }

        func completed(_ error: (any Error)?) {
            if let error { end(.failure(error)); return }
            let (response, body) = lock.withLock { (self.response, self.body) }
            guard let response else { end(.failure(URLError(.badServerResponse))); return }
            var headers: [String: String] = [:]
            for (name, value) in response.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
            }
            end(.success(TransportResponse(status: response.statusCode, headers: headers, body: body)))
        }

        func end(_ result: Result<TransportResponse, any Error>) {
            let (first, continuation, deadline): (Bool, CheckedContinuation<TransportResponse, any Error>?, DispatchWorkItem?) = lock.withLock {
                guard !ended else { return (false, nil, nil) }
                ended = true
                body = Data()
                defer { self.continuation = nil }
                return (true, self.continuation, _deadline)
            }
            guard first else { return }
            deadline?.cancel()
            if case .failure = result { task.cancel() }
            continuation?.resume(with: result)
        }
    }

    /// The session's delegate: hands each task's events to its exchange.
    final class Reader: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        private let lock = NSLock()
        private var exchanges: [Int: Exchange] = [:]

        func add(_ exchange: Exchange) {
            lock.withLock { exchanges[exchange.task.taskIdentifier] = exchange }
        }

        private func exchange(_ task: URLSessionTask, removing: Bool = false) -> Exchange? {
            lock.withLock { removing ? exchanges.removeValue(forKey: task.taskIdentifier) : exchanges[task.taskIdentifier] }
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
            completionHandler(exchange(dataTask)?.received(response) == true ? .allow : .cancel)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            exchange(dataTask)?.received(data)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            exchange(task, removing: true)?.completed(error)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
            completionHandler(exchange(task)?.allowsRedirect(to: request.url) == true ? request : nil)
        }
    }
}
