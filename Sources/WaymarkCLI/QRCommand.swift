import Foundation

/// `waymark qr URL`: a QR code for a link on one of the app's hosts, drawn by the server
/// (`GET /v1/qr`), written to a file or standard output.
enum QRCommand {
    static let help = """
        Usage: waymark qr URL --server URL --token T [--ecc L|M|Q|H] [--format svg|png] [--scale N] [--output F]

        Draws a QR code for URL, an https link on one of the app's universal-link hosts (a
        link on any other host is refused). The server chooses the smallest version that
        holds the link at the error-correction level (default M: about 15 % of the code may
        be damaged), with a four-module quiet zone. Needs the scope routes:read.

        Options:
        \(RemoteCommands.connection)
          --ecc L|M|Q|H    Error correction: L 7 %, M 15 %, Q 25 %, H 30 % (default M)
          --format F       svg (default) or png
          --scale N        Pixels per module, 1 to 32 (default 8)
          --output F       Write the image to F (default: standard output)
          --help           Show this help

        Exit status: 0 drawn, 1 refused (undeclared host, too long, token), 2 bad usage,
        3 server unreachable or failing.
        """

    static func run(_ arguments: [String], environment: [String: String], output: inout Output) throws(CLIError) -> ExitCode {
        let parsed = try Arguments(arguments, command: "qr", options: ["--server", "--token", "--ecc", "--format", "--scale", "--output"],
                                   booleans: ["--help"])
        if parsed.has("--help") {
            output.print(help)
            return .success
        }
        guard let link = parsed.positionals.first else { throw .missingArgument("the URL") }
        guard parsed.positionals.count == 1 else { throw .unexpectedArgument(parsed.positionals[1]) }
        var items = [URLQueryItem(name: "url", value: link)]
        for (option, name) in [("--ecc", "ecc"), ("--format", "format"), ("--scale", "scale")] {
            if let value = parsed.last(option) { items.append(URLQueryItem(name: name, value: value)) }
        }
        var components = URLComponents()
        components.queryItems = items
        // URLComponents leaves + and & alone inside values where a query needs them escaped.
        let query = (components.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        let client = try APIClient(parsed, environment: environment)
        let answer = try client.send("GET", "/v1/qr?" + query, json: false)
        guard answer.status == 200 else { throw APIClient.refusal(answer) }
        if let path = parsed.last("--output") {
            do {
                try Data(answer.body).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                throw .unavailable("Cannot write \(path): \(error.localizedDescription)")
            }
            output.error("Wrote a version \(answer.headers["x-qr-version"] ?? "?") QR code (level \(answer.headers["x-qr-error-correction"] ?? "?")) to \(path).")
        } else {
            FileHandle.standardOutput.write(Data(answer.body))
        }
        return .success
    }
}
