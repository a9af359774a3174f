import Foundation
@testable import LinkChecks
import Testing
import TestSupport

/// What a hostile route could aim the server at. Each row must be refused with its reason,
/// and the target server's request log must stay empty.
@Suite("SSRF: what a hostile route cannot make the server do")
struct SSRFTests {
    enum Attack: String, CaseIterable, Sendable {
        case loopback, shortForm, decimal, hex, octal, unspecified, localhostName
        case ipv6Loopback, ipv4Mapped, ipv4Compatible, metadata, privateNetwork, cgnat
        case nameResolvingToPrivate, nameResolvingToTarget
        case redirectToPrivate, redirectToTargetByName, redirectToHTTP
        case fileScheme, gopherScheme, httpScheme, environmentProxy
        case slowDrip, endlessChunkedBody, neverAnswers, untrustedCertificate
    }

    struct Row {
        var url: String
        /// Text the reported reason must contain.
        var reason: String
        var resolve: [String] = []
        /// Through the fallback probe (redirects followed hop by hop) rather than one fetch
        /// capped at 128 KB (an associated-domain file).
        var followRedirects = false
        var trustSite = true
        /// Text the reason must not contain: what a host name resolved to.
        var hidden: String?
    }

    static func row(_ attack: Attack) -> Row {
        let target = HTTPSFixture.target.port
        let site = "https://site.waymark.test:\(HTTPSFixture.site.port)"
        switch attack {
        case .loopback: return Row(url: "https://127.0.0.1:\(target)/", reason: "loopback (127.0.0.0/8)")
        case .shortForm: return Row(url: "https://127.1:\(target)/", reason: "127.0.0.0/8")
        case .decimal: return Row(url: "https://2130706433:\(target)/", reason: "127.0.0.0/8")
        case .hex: return Row(url: "https://0x7f000001:\(target)/", reason: "127.0.0.0/8")
        case .octal: return Row(url: "https://0177.0.0.1:\(target)/", reason: "127.0.0.0/8")
        case .unspecified: return Row(url: "https://0.0.0.0:\(target)/", reason: "0.0.0.0/8")
        case .localhostName: return Row(url: "https://localhost:\(target)/", reason: "loopback", hidden: "127.0.0")
        case .ipv6Loopback: return Row(url: "https://[::1]:\(target)/", reason: "::1/128")
        case .ipv4Mapped: return Row(url: "https://[::ffff:127.0.0.1]:\(target)/", reason: "IPv4-mapped")
        case .ipv4Compatible: return Row(url: "https://[::127.0.0.1]:\(target)/", reason: "IPv4-compatible")
        case .metadata: return Row(url: "https://169.254.169.254/latest/meta-data/", reason: "169.254.0.0/16")
        case .privateNetwork: return Row(url: "https://192.168.0.1/", reason: "192.168.0.0/16")
        case .cgnat: return Row(url: "https://100.64.0.1/", reason: "100.64.0.0/10")
        case .nameResolvingToPrivate:
            return Row(url: "https://intranet.waymark.test/", reason: "its host name leads to a private network",
                       resolve: ["intranet.waymark.test:443:10.1.2.3"], hidden: "10.1.2.3")
        case .nameResolvingToTarget:
            return Row(url: "https://internal.waymark.test:\(target)/", reason: "its host name leads to loopback",
                       resolve: ["internal.waymark.test:\(target):127.0.0.1"], hidden: "127.0.0")
        case .redirectToPrivate:
            return Row(url: "\(site)/redirect?to=https://127.0.0.1:\(target)/secret", reason: "127.0.0.0/8", followRedirects: true)
        case .redirectToTargetByName:
            return Row(url: "\(site)/redirect?to=https://internal.waymark.test:\(target)/", reason: "leads to loopback",
                       resolve: ["internal.waymark.test:\(target):127.0.0.1"], followRedirects: true, hidden: "127.0.0")
        case .redirectToHTTP:
            return Row(url: "\(site)/redirect?to=http://127.0.0.1:\(target)/", reason: "which is not https", followRedirects: true)
        case .fileScheme: return Row(url: "file:///etc/passwd", reason: "not an https:// address")
        case .gopherScheme: return Row(url: "gopher://127.0.0.1:\(target)/_GET%20/", reason: "not an https:// address")
        case .httpScheme: return Row(url: "http://127.0.0.1:\(target)/", reason: "not an https:// address")
        case .environmentProxy:
            // Were the proxy used, the request would go to the (allowed) site as CONNECT.
            return Row(url: "https://10.9.8.7/", reason: "10.0.0.0/8")
        case .slowDrip: return Row(url: "\(site)/drip", reason: "too slowly or not at all")
        case .endlessChunkedBody: return Row(url: "\(site)/endless", reason: "larger than 128 KB")
        case .neverAnswers: return Row(url: "\(site)/hang", reason: "too slowly or not at all")
        case .untrustedCertificate: return Row(url: "\(site)/status/200", reason: "TLS", trustSite: false)
        }
    }

    @Test("each attack refused, with its reason, the target never reached", arguments: Attack.allCases)
    func refused(_ attack: Attack) throws {
        let row = Self.row(attack)
        var options = HTTPSFixture.site.options()
        options.resolve = row.resolve + ["site.waymark.test:\(HTTPSFixture.site.port):127.0.0.1"]
        if !row.trustSite { options.caFile = nil }
        // https_proxy only: the test process's other clients (the CLI tests' URLSession) speak
        // plain http to loopback, which it does not touch.
        let proxyVariables = ["https_proxy", "HTTPS_PROXY"]
        if attack == .environmentProxy {
            for name in proxyVariables { setenv(name, "http://127.0.0.1:\(HTTPSFixture.site.port)", 1) }
        }
        defer { if attack == .environmentProxy { proxyVariables.forEach { unsetenv($0) } } }
        let fetcher = HTTPSFetcher(options: options)
        let reason: String
        if row.followRedirects {
            let verdict = FallbackProbe(fetcher: fetcher).check(row.url)
            guard case .unreachable(let why) = verdict else {
                Issue.record("\(attack): \(verdict)")
                return
            }
            reason = why
        } else {
            switch fetcher.fetch(row.url, accept: "application/json", maximumBody: 128 << 10) {
            case .success(let response):
                Issue.record("\(attack): fetched, status \(response.status)")
                return
            case .failure(let failure): reason = failure.message
            }
        }
        #expect(reason.contains(row.reason), "\(attack): \(reason)")
        if let hidden = row.hidden { #expect(!reason.contains(hidden), "\(attack) tells what a name resolves to: \(reason)") }
        #expect(HTTPSFixture.target.log().isEmpty, "the target was reached: \(HTTPSFixture.target.log())")
        #expect(!HTTPSFixture.site.log().contains { $0.hasPrefix("PROXY") }, "a proxy from the environment was used")
    }

    @Test(arguments: [("https://127.0.0.1/", true), ("https://127.1:8443/x", true), ("https://2130706433/", true),
                      ("https://0x7f000001/", true), ("https://0177.0.0.1/", true), ("https://[::1]:443/", true),
                      ("https://user@10.0.0.1/", true), ("https://intranet.example/", false), ("https://localhost:1/", false),
                      ("https://10.0.0.1.example/", false), ("https://a@b@intranet.example:4/", false)])
    func addressesAreToldOnlyWhenTheURLNamesThem(_ url: String, _ literal: Bool) {
        #expect(HTTPSFetcher.namesAnAddress(url) == literal, "\(url)")
    }

    @Test func theAllowedSiteIsReachedAndItsRedirectsFollowed() throws {
        let site = HTTPSFixture.site
        var options = site.options()
        options.resolve = ["site.waymark.test:\(site.port):127.0.0.1"]
        let probe = FallbackProbe(fetcher: HTTPSFetcher(options: options))
        let base = "https://site.waymark.test:\(site.port)"
        #expect(probe.check("\(base)/status/204") == .reachable(status: 204, redirects: []))
        let hop = "\(base)/status/200"
        #expect(probe.check("\(base)/redirect?to=\(hop)&status=301") == .reachable(status: 200, redirects: [hop]))
        guard case .unreachable(let why) = probe.check("\(base)/status/404") else { Issue.record("404 reachable"); return }
        #expect(why == "it answers 404 (Not Found)")
    }
}
