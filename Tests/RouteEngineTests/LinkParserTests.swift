@testable import RouteEngine
import LibraryTestSupport
import Testing

@Suite("Link parser internals")
struct LinkParserTests {
    /// The two hard-coded masks must say exactly what `urlCharacters` lists.
    @Test func urlByteMasksMatchTheCharacterList() {
        let allowed = Set(LinkParser.urlCharacters.utf8)
        for byte in 0...255 {
            #expect(LinkParser.isURLByte(UInt8(byte)) == allowed.contains(UInt8(byte)), "byte \(byte)")
        }
    }

    @Test func malformedLinksSayWhich() {
        let resolver = Fixtures.storefront
        let cases: [(String, LinkDefect)] = [
            ("https://user@storefront.example/", .userinfo),
            ("https://evil.example/", .undeclaredHost("evil.example")),
            ("shop://x", .undeclaredScheme("shop")),
            ("https://storefront.example:8080/", .unexpectedPort("8080")),
            ("https://storefront.example/%2e%2E", .dotSegment),
            ("https://storefront.example/%C3", .invalidUTF8),
            ("https://storefront.example/%G1", .invalidPercentEncoding),
            ("https://storefront.example/a b", .invalidCharacter(offset: 28)),
            ("https://storefront.example/%0a", .controlCharacter),
        ]
        for (link, defect) in cases {
            let resolution = resolver.resolve(url: link, context: ResolutionContext())
            #expect(resolution == .notFound(NotFound(.malformed, detail: defect.description)), "\(link)")
        }
    }
}
