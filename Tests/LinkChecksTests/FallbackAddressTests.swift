import LinkChecks
import RouteEngine
import Testing

/// A fallback naming a loopback, private or otherwise non-public host — in any spelling
/// curl and browsers read as an address — or localhost is refused at validation.
@Suite("Fallback addresses")
struct FallbackAddressTests {
    static let rows: [(String, Bool)] = [
        ("https://web.storefront.example/sale", false),
        ("https://8.8.8.8/sale", false),
        ("https://[2001:4860:4860::8888]/", false),
        ("https://10.0.0.1.example/", false),
        ("https://localhost.example/", false),
        ("https://storefront.example:8443/x?y=127.0.0.1", false),
        ("https://127.0.0.1/", true),
        ("https://127.1:8443/x", true),
        ("https://0x7f000001/", true),
        ("https://2130706433/", true),
        ("https://0177.0.0.1/", true),
        ("https://[::1]:443/", true),
        ("https://[fe80::1]/", true),
        ("https://10.0.0.1/", true),
        ("https://192.168.1.20/", true),
        ("https://user@169.254.169.254/latest/", true),
        ("https://localhost/", true),
        ("https://LOCALHOST./", true),
        ("https://admin.localhost:8080/", true),
        ("https://0.0.0.0/", true),
    ]

    @Test(arguments: rows)
    func refused(_ url: String, _ refused: Bool) {
        let routes: JSONValue = ["routes": [["id": "home", "patterns": ["/"], "destination": "home"],
                                            ["id": "sale", "patterns": ["/sale"], "destination": "home", "fallbackURL": .string(url)]]]
        let problems = FallbackAddresses.problems(in: routes)
        #expect(problems.isEmpty != refused, "\(url): \(problems.map(\.message))")
        if refused {
            #expect(problems.first?.code == .insecureFallback && problems.first?.severity == .error)
            #expect(problems.first?.path.description == "routes[1].fallbackURL")
            #expect(problems.first?.message.hasPrefix("Route \"sale\": its fallback's host is") == true, "\(problems.first?.message ?? "")")
        }
    }
}
