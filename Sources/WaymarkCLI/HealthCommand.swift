import Replication

/// `waymark health`: GETs a daemon's `/healthz` (or `/readyz`) through libcurl, for a
/// container's HEALTHCHECK, where the image has the binary and libcurl but no curl.
enum HealthCommand {
    static let help = """
        Usage: waymark health [--url URL] [--ready]

        Asks a running daemon whether it is alive (GET /healthz) or, with --ready, ready to
        serve manifests (GET /readyz). Prints the answer; exit 0 on 200, 1 otherwise.

        Options:
          --url URL   The daemon's base URL (default http://127.0.0.1:8080)
          --ready     Ask /readyz instead of /healthz
          --help      Show this help
        """

    static func run(_ arguments: [String], output: inout Output) throws(CLIError) -> ExitCode {
        let parsed = try Arguments(arguments, command: "health", options: ["--url"], booleans: ["--ready", "--help"])
        if parsed.has("--help") {
            output.print(help)
            return .success
        }
        if let extra = parsed.positionals.first { throw .unexpectedArgument(extra) }
        let base = parsed.last("--url") ?? "http://127.0.0.1:8080"
        guard base.hasPrefix("http://") || base.hasPrefix("https://") else {
            throw .invalidValue(option: "--url", value: base, expected: "an http:// or https:// base URL")
        }
        var client = PrimaryClient(base: base, token: "")
        client.connectTimeout = 2_000
        client.totalTimeout = 5_000
        client.maximumBody = 1 << 20
        let path = parsed.has("--ready") ? "/readyz" : "/healthz"
        switch client.get(path) {
        case .failure(let error):
            throw .unavailable("\(error.message)")
        case .success(let response):
            output.print(String(decoding: response.body, as: UTF8.self))
            guard response.status == 200 else { throw .refused("\(path) answered \(response.status)") }
            return .success
        }
    }
}
