import Foundation
import Testing
import WaymarkClient

/// `DeferredLink`: a pasted hand-off text opens its link by the deferred door when it is one
/// https link on the app's hosts, young enough, and not pasted before on this install.
@Suite("Deferred links from a paste")
struct DeferredLinkTests {
    static let now = Date(timeIntervalSince1970: 1_796_000_000)
    static func made(_ secondsAgo: Int) -> String { String(1_796_000_000 - secondsAgo) }
    static func links(_ directory: URL = temporaryDirectory()) -> DeferredLink {
        DeferredLink(directory: directory, hosts: ["storefront.example", "Links.Storefront.Example"], now: { Self.now })
    }

    static let rows: [(String, String, String?)] = [
        ("made a minute ago", "https://storefront.example/sale/spring?code=SPRING#waymark=" + made(60), "https://storefront.example/sale/spring?code=SPRING"),
        ("white space around it, as a paste may add", "\n  https://storefront.example/p/p1#waymark=\(made(1))\t\n", "https://storefront.example/p/p1"),
        ("a host without case", "https://LINKS.storefront.example/p/p1#waymark=" + made(1), "https://LINKS.storefront.example/p/p1"),
        ("a day old, just", "https://storefront.example/p/p1#waymark=" + made(86_400), "https://storefront.example/p/p1"),
        ("stale: older than a day", "https://storefront.example/p/p1#waymark=" + made(86_401), nil),
        ("made in the future past the skew", "https://storefront.example/p/p1#waymark=" + made(-301), nil),
        ("a foreign host", "https://evil.example/p/p1#waymark=" + made(1), nil),
        ("a lookalike host", "https://storefront.example.evil.example/p/p1#waymark=" + made(1), nil),
        ("a user name before the host", "https://storefront.example@evil.example/p#waymark=" + made(1), nil),
        ("a port", "https://storefront.example:8443/p/p1#waymark=" + made(1), nil),
        ("not https", "http://storefront.example/p/p1#waymark=" + made(1), nil),
        ("a script address", "javascript:alert(1)//storefront.example#waymark=" + made(1), nil),
        ("truncated: no time", "https://storefront.example/p/p1#waymark=", nil),
        ("truncated: no marker", "https://storefront.example/p/p1", nil),
        ("truncated: half a marker", "https://storefront.example/p/p1#waym", nil),
        ("a time that is not digits", "https://storefront.example/p/p1#waymark=-5", nil),
        ("a time of 13 digits", "https://storefront.example/p/p1#waymark=1796000000000", nil),
        ("two markers: the link has a fragment", "https://storefront.example/p/p1#waymark=1#waymark=" + made(1), nil),
        ("a space inside", "https://storefront.example/p/p 1#waymark=" + made(1), nil),
        ("a control character inside", "https://storefront.example/p/p1\u{0}x#waymark=" + made(1), nil),
        ("a line break inside", "https://storefront.example/p\n/p1#waymark=" + made(1), nil),
        ("any other text someone copied", "Meet at 5, see https://storefront.example/p/p1#waymark=" + made(1), nil),
        ("too long", "https://storefront.example/" + String(repeating: "p", count: 2_300) + "#waymark=" + made(1), nil),
        ("empty", "", nil),
    ]

    @Test(arguments: rows)
    func pasted(_ row: (String, String, String?)) {
        #expect(Self.links().intent(fromPasted: row.1) == row.2.map { .link($0, door: .deferred) }, "\(row.0)")
    }

    @Test func aTextOpensOncePerInstallEvenAfterARelaunch() {
        let directory = temporaryDirectory()
        let text = "https://storefront.example/p/p1#waymark=" + Self.made(5)
        #expect(Self.links(directory).intent(fromPasted: text) == .link("https://storefront.example/p/p1", door: .deferred))
        #expect(Self.links(directory).intent(fromPasted: text) == nil, "reused, after a relaunch")
        #expect(Self.links(directory).intent(fromPasted: " " + text) == nil, "reused, with white space around it")
        #expect(Self.links(directory).intent(fromPasted: "https://storefront.example/p/p2#waymark=" + Self.made(5)) != nil, "another one opens")
    }

    @Test func whatIsRememberedIsBounded() throws {
        let directory = temporaryDirectory()
        let links = Self.links(directory)
        for index in 0..<(DeferredLink.remembered + 10) {
            #expect(links.intent(fromPasted: "https://storefront.example/p/p\(index)#waymark=" + Self.made(1)) != nil)
        }
        let kept = try String(contentsOf: directory.appendingPathComponent("deferred-links"), encoding: .utf8)
        #expect(kept.split(separator: "\n").count == DeferredLink.remembered)
    }

    @Test func theTextIsTheLandingsFormat() {
        #expect(DeferredLink.handOffText(link: "https://storefront.example/p/p1", time: 1_796_000_000) == "https://storefront.example/p/p1#waymark=1796000000")
    }
}
