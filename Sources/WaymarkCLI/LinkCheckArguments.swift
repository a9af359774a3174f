import LinkChecks

/// The link-check options `validate` and `serve` share.
enum LinkCheckArguments {
    static let options: Set<String> = [
        "--link-findings", "--link-parallelism", "--link-timeout", "--link-cache", "--link-checks", "--link-check-seconds", "--ca-file",
        "--connect-to", "--allow-address",
    ]

    static let help = """
          --check-links            Fetch every fallback URL and each universal-link host's
                                   apple-app-site-association and assetlinks.json (https only,
                                   public addresses only) and report what does not work
          --link-findings W        warning (default) or error: errors block publishing
          --link-parallelism N     Fetches at once (default 8)
          --link-timeout MS        Longest a fetch may take, in milliseconds (default 8000)
          --link-check-seconds S   Longest one check waits for its fetches (default 30; 0: no
                                   limit); addresses not fetched by then are reported as not
                                   checked
          --ca-file FILE           Trust the CAs in this PEM file instead of the system's
          --connect-to H:P:H2:P2   Connect to H2:P2 when a check asks for H:P (curl's
                                   --connect-to); repeatable
          --allow-address A:P      Allow this loopback or private address and port despite the
                                   public-only rule. For tests against local servers; repeatable
        """

    static let cacheHelp = """
          --link-cache SECONDS     Reuse a fetched result this long (default 300; 0: never)
          --link-checks N          Checks at once: N validations and N publishes, one of each
                                   per token (default 4); past them 503 linkChecksBusy
        """

    /// The options, or nil without `--check-links`. `cache`: whether `--link-cache` and
    /// `--link-checks` apply (serve).
    static func parse(_ parsed: Arguments, cache: Bool) throws(CLIError) -> LinkCheckOptions? {
        let given = options.filter { parsed.last($0) != nil }.sorted()
        guard parsed.has("--check-links") else {
            if let first = given.first { throw .invalidValue(option: first, value: parsed.last(first)!, expected: "--check-links with it") }
            return nil
        }
        if !cache, let value = parsed.last("--link-cache") {
            throw .invalidValue(option: "--link-cache", value: value, expected: "no cache for a single validation (serve only)")
        }
        if !cache, let value = parsed.last("--link-checks") {
            throw .invalidValue(option: "--link-checks", value: value, expected: "one check for a single validation (serve only)")
        }
        var options = LinkCheckOptions()
        switch parsed.last("--link-findings") {
        case nil, "warning": options.severity = .warning
        case "error": options.severity = .error
        case let other?: throw .invalidValue(option: "--link-findings", value: other, expected: "warning or error")
        }
        options.parallelism = try parsed.number("--link-parallelism", in: 1...64, expected: "1 to 64") ?? options.parallelism
        options.cacheSeconds = try parsed.number("--link-cache", in: 0...86_400, expected: "0 to 86400 seconds") ?? options.cacheSeconds
        options.maximumChecks = try parsed.number("--link-checks", in: 1...64, expected: "1 to 64") ?? options.maximumChecks
        options.checkSeconds = try parsed.number("--link-check-seconds", in: 0...3_600, expected: "0 to 3600 seconds") ?? options.checkSeconds
        if let timeout = try parsed.number("--link-timeout", in: 100...120_000, expected: "100 to 120000 milliseconds") {
            options.fetch.totalTimeout = timeout
            options.fetch.connectTimeout = min(options.fetch.connectTimeout, timeout)
        }
        options.fetch.caFile = parsed.last("--ca-file")
        for entry in parsed.all("--connect-to") {
            // HOST:PORT:CONNECT-HOST:CONNECT-PORT; a bracketed IPv6 literal may hold colons.
            let parts = entry.replacingBracketed().split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 4, UInt16(parts[3]) != nil, parts.allSatisfy({ !$0.isEmpty }) else {
                throw .invalidValue(option: "--connect-to", value: entry, expected: "HOST:PORT:CONNECT-HOST:CONNECT-PORT")
            }
            options.fetch.connectTo.append(entry)
        }
        for entry in parsed.all("--allow-address") {
            guard let address = SocketAddress(entry) else {
                throw .invalidValue(option: "--allow-address", value: entry, expected: "ADDRESS:PORT, such as 127.0.0.1:8443 or [::1]:8443")
            }
            options.fetch.policy.exceptions.insert(address)
        }
        return options
    }
}

private extension String {
    /// The text with what is between brackets blanked to `x`, so splitting on `:` sees only
    /// the separators.
    func replacingBracketed() -> String {
        var inside = false
        return String(map { character in
            if character == "[" { inside = true } else if character == "]" { inside = false; return "x" }
            return inside ? "x" : character
        })
    }
}
