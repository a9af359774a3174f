import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import RouteEngine
import Synchronization

/// A Waymark server as the CLI sees it: JSON requests with a bearer token, answers parsed,
/// error bodies (`{"error": {code, message, details?}}`) turned into `CLIError`s.
struct APIClient {
    struct Answer {
        var status: Int
        var headers: [String: String]
        var json: JSONValue
        /// The body as received (an image, for `waymark qr`).
        var body: [UInt8] = []
    }

    let base: URL
    let token: String
    var timeout: TimeInterval = 60

    /// `--server URL` and `--token T` (or `WAYMARK_TOKEN`), checked.
    init(_ parsed: Arguments, environment: [String: String]) throws(CLIError) {
        guard let server = parsed.last("--server") ?? environment["WAYMARK_SERVER"] else {
            throw .missingArgument("--server URL (or WAYMARK_SERVER)")
        }
        guard var components = URLComponents(string: server), components.scheme == "http" || components.scheme == "https",
              components.host?.isEmpty == false, components.query == nil
        else { throw .invalidValue(option: "--server", value: server, expected: "an http or https URL such as http://127.0.0.1:8080") }
        while components.path.hasSuffix("/") { components.path.removeLast() }
        guard let url = components.url else { throw .invalidValue(option: "--server", value: server, expected: "an http or https URL") }
        guard let token = parsed.last("--token") ?? environment["WAYMARK_TOKEN"], !token.isEmpty else {
            throw .missingArgument("--token T (or WAYMARK_TOKEN)")
        }
        base = url
        self.token = token
    }

    /// Sends one request; any answer with a JSON body comes back (callers decide what a
    /// 4xx means), and a transport failure or 5xx is `.unavailable`.
    /// `json: false` takes a body that is not JSON (an image) when the answer is a success.
    func send(_ method: String, _ path: String, body: [UInt8]? = nil, headers: [String: String] = [:], json expectJSON: Bool = true) throws(CLIError) -> Answer {
        var request = URLRequest(url: URL(string: base.absoluteString + path)!, timeoutInterval: timeout)
        request.httpMethod = method
        request.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body {
            request.httpBody = Data(body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let result = Mutex<Result<(Data, HTTPURLResponse), CLIError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let session = URLSession(configuration: .ephemeral)
        let url = request.url?.absoluteString ?? path
        session.dataTask(with: request) { data, response, error in
            if let error {
                result.withLock { $0 = .failure(.unavailable("Cannot reach \(url): \(error.localizedDescription)")) }
            } else if let response = response as? HTTPURLResponse {
                result.withLock { $0 = .success((data ?? Data(), response)) }
            } else {
                result.withLock { $0 = .failure(.unavailable("No HTTP answer from \(url).")) }
            }
            done.signal()
        }.resume()
        done.wait()
        session.finishTasksAndInvalidate()
        let (data, response) = try result.withLock { $0! }.get()
        var fields: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
        }
        let json = data.isEmpty ? JSONValue.null : ((try? JSONParser().parse(data)) ?? .null)
        if response.statusCode >= 500 {
            throw .unavailable("The server answered \(response.statusCode) to \(method) \(path): \(Self.message(json) ?? String(decoding: data.prefix(300), as: UTF8.self))")
        }
        if json == .null, !data.isEmpty, expectJSON || response.statusCode >= 300 {
            throw .unavailable("\(url) answered \(response.statusCode) with something that is not JSON; is --server a Waymark server?")
        }
        return Answer(status: response.statusCode, headers: fields, json: json, body: Array(data))
    }

    /// The server's error message, when the body is an error.
    static func message(_ json: JSONValue) -> String? {
        guard let error = json["error"], let message = error["message"]?.stringValue else { return nil }
        return message
    }

    /// A 4xx as a refusal carrying the server's own explanation.
    static func refusal(_ answer: Answer) -> CLIError {
        .refused("The server refused (\(answer.status) \(answer.json["error"]?["code"]?.stringValue ?? "")): "
            + (message(answer.json) ?? "no explanation given"))
    }
}

extension APIClient {
    /// What every listing command does before it prints its table (`revisions`, `schedules`):
    /// its options read, `--help` printed, `GET path` asked, a refusal thrown, `--json`
    /// printed as the server answered, `none` printed for an empty list. Returns the answer
    /// and its `key` list to print as a table, or nil when there is nothing more to print.
    static func listing(_ arguments: [String], command: String, help: String, path: String, key: String, none: String,
                        environment: [String: String], output: inout Output) throws(CLIError) -> (JSONValue, [JSONValue])? {
        let parsed = try Arguments(arguments, command: command, options: ["--server", "--token"], booleans: ["--json", "--help"])
        if parsed.has("--help") {
            output.print(help)
            return nil
        }
        if let extra = parsed.positionals.first { throw .unexpectedArgument(extra) }
        let answer = try APIClient(parsed, environment: environment).send("GET", path)
        guard answer.status == 200 else { throw APIClient.refusal(answer) }
        if parsed.has("--json") {
            output.print(answer.json.serialized(pretty: true))
            return nil
        }
        let items = answer.json[key]?.arrayValue ?? []
        guard !items.isEmpty else {
            output.print(none)
            return nil
        }
        return (answer.json, items)
    }
}
