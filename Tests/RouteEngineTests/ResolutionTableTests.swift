import Foundation
import RouteEngine
import TestSupport
import Testing

/// One row: a link, who is asking and when, and the expected `Resolution.summary`.
struct ResolutionRow: Sendable, CustomTestStringConvertible {
    var url: String
    var satisfied: Set<String>
    var now: String
    var expected: String
    var label: String

    init(_ url: String, _ expected: String, auth: Bool = false, satisfied: Set<String> = [], now: String = "2026-03-15T00:00:00Z",
         _ label: String) {
        self.url = url
        self.satisfied = auth ? satisfied.union(["auth"]) : satisfied
        self.now = now
        self.expected = expected
        self.label = label
    }

    var testDescription: String { label }

    /// Resolves the row's link with `resolver` and compares the one-line summary.
    func check(_ resolver: Resolver, sourceLocation: SourceLocation = #_sourceLocation) {
        let context = ResolutionContext(satisfied: satisfied, now: Fixtures.date(now))
        #expect(resolver.resolve(url: url, context: context).summary == expected, sourceLocation: sourceLocation)
    }
}

private let S = "https://storefront.example"
private let longQuery = String(repeating: "x", count: 101)
private let maxQuery = String(repeating: "y", count: 100)
private let exactly2048 = S + "/product/p1" + String(repeating: "/", count: 2048 - (S + "/product/p1").utf8.count)

/// The storefront example (iOS 5.3.0), logged out at 2026-03-15 unless a row says otherwise.
let storefrontRows: [ResolutionRow] = [
    // Proceed: the three doors and every normalisation rule.
    .init(S + "/", "proceed home home", "root with slash"),
    .init(S, "proceed home home", "root without path"),
    .init("storefront://", "proceed home home", "custom scheme root"),
    .init("storefront://product/p1", "proceed product product id=p1", "custom scheme host is first segment"),
    .init(S + "/product/p1", "proceed product product id=p1", "universal link"),
    .init("https://www.storefront.example/p/p42", "proceed product product id=p42", "second host, short vocabulary"),
    .init(S + "/deeplink/product/p12345678", "proceed product product id=p12345678", "legacy vocabulary, 8 digits"),
    .init("https://STOREFRONT.EXAMPLE/product/p1", "proceed product product id=p1", "host compares case-insensitively"),
    .init("HTTPS://storefront.example/product/p1", "proceed product product id=p1", "https scheme case-insensitive"),
    .init("StoreFront://product/p1", "proceed product product id=p1", "custom scheme case-insensitive"),
    .init(S + "/PRODUCT/p1", "proceed product product id=p1", "literal compares case-insensitively"),
    .init(S + "/Deeplink/Product/p7", "proceed product product id=p7", "mixed-case literals"),
    .init("https://storefront.example:443/product/p1", "proceed product product id=p1", ":443 is no port"),
    .init(S + "/product/p1/", "proceed product product id=p1", "trailing slash"),
    .init(S + "//product//p1", "proceed product product id=p1", "empty segments"),
    .init(S + "/product/p1#reviews", "proceed product product id=p1", "fragment ignored"),
    .init(S + "/product/p1#frag%zz", "proceed product product id=p1", "fragment not decoded"),
    .init(S + "/product/p1?utm_source=mail&utm_campaign=x", "proceed product product id=p1", "unknown query items ignored"),
    .init(S + "/product/p1?id=p2", "proceed product product id=p1", "query never overrides a capture"),
    .init("storefront://product/p1?id=p9", "proceed product product id=p1", "query never overrides a capture (scheme)"),
    .init(S + "/product/%70%31", "proceed product product id=p1", "capture percent-decoded"),
    .init(S + "/%70roduct/p1", "proceed product product id=p1", "literal percent-decoded"),
    .init("storefront:product/p1", "proceed product product id=p1", "custom scheme without //"),
    .init("storefront:///product/p1", "proceed product product id=p1", "custom scheme with empty host"),
    .init(S + "/product/p1?q=%20", "proceed product product id=p1", "valid encoded query"),
    .init(S + "/c/shoes", "proceed category category slug=shoes", "category short"),
    .init(S + "/category/running-shoes", "proceed category category slug=running-shoes", "category long, hyphenated slug"),
    .init("storefront://c/summer-2026", "proceed category category slug=summer-2026", "slug with digits"),
    .init(S + "/search?q=shoes", "proceed search search q=shoes", "query fills mapped param"),
    .init(S + "/search?q=red+shoes", "proceed search search q=red shoes", "plus is a space in query"),
    .init(S + "/search?q=red%20shoes", "proceed search search q=red shoes", "encoded space in query"),
    .init(S + "/search?q=a%2Bb", "proceed search search q=a+b", "encoded plus stays plus"),
    .init(S + "/search", "proceed search search", "optional param absent"),
    .init(S + "/search?q=", "proceed search search", "empty query value is absent"),
    .init(S + "/search?q", "proceed search search", "query name without value is absent"),
    .init(S + "/search?utm_source=x", "proceed search search", "only unknown query items"),
    .init(S + "/search?q=a&q=b", "proceed search search q=a", "first query item wins"),
    .init(S + "/search?Q=shoes", "proceed search search", "query names are case-sensitive"),
    .init(S + "/search?q=caf%C3%A9", "proceed search search q=café", "UTF-8 query value"),
    .init(S + "/search?q=" + maxQuery, "proceed search search q=" + maxQuery, "query at max length"),
    .init(S + "/cart", "proceed cart cart", auth: true, "cart logged in"),
    .init(S + "/orders", "proceed orders orders", auth: true, "orders logged in"),
    .init(S + "/orders/42", "proceed order-detail orderDetail orderId=42", auth: true, "order detail logged in"),
    .init(S + "/orders/1", "proceed order-detail orderDetail orderId=1", auth: true, "int at min"),
    .init(S + "/orders/2147483647", "proceed order-detail orderDetail orderId=2147483647", auth: true, "int at max"),
    .init(S + "/orders/%34%32", "proceed order-detail orderDetail orderId=42", auth: true, "encoded digits decode"),
    .init(S + "/orders/42?orderId=1", "proceed order-detail orderDetail orderId=42", auth: true, "query never overrides int capture"),
    .init(S + "/settings", "proceed settings settings", "sheet destination"),
    .init(S + "/new", "proceed new-arrivals newArrivals", "5.3.0-only destination"),
    .init(S + "/sale/spring", "proceed spring-sale promo code=SPRING26", "campaign inside window"),
    .init(S + "/sale/spring", "proceed spring-sale promo code=SPRING26", now: "2026-03-01T00:00:00Z", "window start is inclusive"),
    .init(S + "/sale/spring", "proceed spring-sale promo code=SPRING26", now: "2026-03-31T23:59:59Z", "last second of window"),
    .init(S + "/SALE/SPRING", "proceed spring-sale promo code=SPRING26", "campaign literal case"),
    .init("storefront://sale/spring", "proceed spring-sale promo code=SPRING26", "campaign via scheme"),
    .init(S + "/sale/spring?code=HACKED", "proceed spring-sale promo code=SPRING26", "query never overrides a constant"),
    .init(exactly2048, "proceed product product id=p1", "exactly 2048 bytes"),

    // Gated: the same gate whatever the door.
    .init(S + "/cart", "gated auth cart", "cart logged out"),
    .init(S + "/orders", "gated auth orders", "orders logged out"),
    .init(S + "/orders/42", "gated auth order-detail", "order detail logged out"),
    .init("storefront://orders/7", "gated auth order-detail", "order detail by scheme"),
    .init("https://www.storefront.example/orders/42?utm=1", "gated auth order-detail", "order detail other host"),
    .init(S + "/cart", "gated auth cart", satisfied: ["other"], "unrelated precondition satisfied"),
    .init(S + "/orders/%34%32", "gated auth order-detail", "encoded digits still gate"),

    // unknownRoute and expiry.
    .init(S + "/products/p1", "notFound unknownRoute", "unknown literal"),
    .init(S + "/product", "notFound unknownRoute", "capture segment missing"),
    .init(S + "/product/p1/reviews", "notFound unknownRoute", "extra segment"),
    .init(S + "/p", "notFound unknownRoute", "short vocabulary without id"),
    .init("storefront://unknown", "notFound unknownRoute", "unknown first segment"),
    .init(S + "/orders/42/items", "notFound unknownRoute", "deeper than any route"),
    .init(S + "/sale", "notFound unknownRoute", "prefix of campaign"),
    .init(S + "/sale/summer", "notFound unknownRoute", "other campaign"),
    .init(S + "/c", "notFound unknownRoute", "category without slug"),
    .init(S + "/sale/spring", "notFound unknownRoute spring-sale", now: "2026-02-28T23:59:59Z", "campaign not live yet"),
    .init(S + "/sale/spring", "notFound expired spring-sale", now: "2026-04-01T00:00:00Z", "window end is exclusive"),
    .init(S + "/sale/spring", "notFound expired spring-sale", now: "2026-11-21T00:00:00Z", "campaign over"),
    .init(S + "/sale/spring", "notFound expired spring-sale", auth: true, now: "2027-01-01T00:00:00Z", "expired logged in"),

    // Hostile: wrong types and edge values are validationFailed, gate or no gate.
    .init(S + "/product/x1", "notFound validationFailed product", "pattern mismatch"),
    .init(S + "/product/P1", "notFound validationFailed product", "captured case is kept"),
    .init(S + "/product/p123456789", "notFound validationFailed product", "nine digits"),
    .init(S + "/product/p", "notFound validationFailed product", "no digits"),
    .init(S + "/product/p%C3%A9", "notFound validationFailed product", "non-ASCII capture"),
    .init(S + "/product/p1%2F..%2F..%2Fadmin", "notFound validationFailed product", "encoded traversal stays one segment"),
    .init(S + "/product%2Fp1", "notFound unknownRoute", "encoded slash never splits"),
    .init(S + "/%2e%2e%2fadmin", "notFound unknownRoute", "encoded ../ is one segment"),
    .init(S + "/orders/0", "notFound validationFailed order-detail", auth: true, "int below min"),
    .init(S + "/orders/0", "notFound validationFailed order-detail", "gate never hides a broken link"),
    .init(S + "/orders/-1", "notFound validationFailed order-detail", "negative"),
    .init(S + "/orders/2147483648", "notFound validationFailed order-detail", auth: true, "int above max"),
    .init(S + "/orders/9223372036854775808", "notFound validationFailed order-detail", "Int64 overflow"),
    .init(S + "/orders/99999999999999999999999", "notFound validationFailed order-detail", "huge number"),
    .init(S + "/orders/042", "notFound validationFailed order-detail", "leading zero"),
    .init(S + "/orders/+42", "notFound validationFailed order-detail", "plus sign"),
    .init(S + "/orders/4.2", "notFound validationFailed order-detail", "decimal"),
    .init(S + "/orders/1e3", "notFound validationFailed order-detail", "exponent"),
    .init(S + "/orders/0x2A", "notFound validationFailed order-detail", "hexadecimal"),
    .init(S + "/orders/%2042", "notFound validationFailed order-detail", "leading space"),
    .init(S + "/c/Shoes", "notFound validationFailed category", "slug uppercase"),
    .init(S + "/c/summer_sale", "notFound validationFailed category", "slug underscore"),
    .init(S + "/c/-shoes", "notFound validationFailed category", "slug leading hyphen"),
    .init(S + "/c/shoes-", "notFound validationFailed category", "slug trailing hyphen"),
    .init(S + "/c/a--b", "notFound validationFailed category", "slug double hyphen"),
    .init(S + "/search?q=" + longQuery, "notFound validationFailed search", "query over max length"),

    // Hostile: malformed links.
    .init("http://storefront.example/product/p1", "notFound malformed", "plain http"),
    .init("ftp://storefront.example/product/p1", "notFound malformed", "ftp"),
    .init("javascript:alert(1)", "notFound malformed", "javascript scheme"),
    .init("file:///etc/passwd", "notFound malformed", "file scheme"),
    .init("https://evil.example/product/p1", "notFound malformed", "undeclared host"),
    .init("https://storefront.example.evil.example/product/p1", "notFound malformed", "declared host as prefix"),
    .init("https://evilstorefront.example/product/p1", "notFound malformed", "declared host as suffix"),
    .init("https://storefront.example./product/p1", "notFound malformed", "trailing dot host"),
    .init("https://[::1]/product/p1", "notFound malformed", "IPv6 literal"),
    .init("https://127.0.0.1/product/p1", "notFound malformed", "IPv4 literal"),
    .init("https://user@storefront.example/product/p1", "notFound malformed", "userinfo"),
    .init("https://storefront.example@evil.example/product/p1", "notFound malformed", "userinfo disguising host"),
    .init("https://user:pw@storefront.example/", "notFound malformed", "userinfo with password"),
    .init("storefront://user@product/p1", "notFound malformed", "userinfo in custom scheme"),
    .init("https://storefront.example:8443/product/p1", "notFound malformed", "other port"),
    .init("https://storefront.example:80/product/p1", "notFound malformed", "port 80"),
    .init("https://storefront.example:/product/p1", "notFound malformed", "empty port"),
    .init("https://storefront.example:0443/", "notFound malformed", "port with leading zero"),
    .init("https:///product/p1", "notFound malformed", "https without host"),
    .init("https:storefront.example/product/p1", "notFound malformed", "https without //"),
    .init("//storefront.example/product/p1", "notFound malformed", "scheme-relative"),
    .init("/product/p1", "notFound malformed", "path only"),
    .init("", "notFound malformed", "empty"),
    .init("1storefront://product/p1", "notFound malformed", "scheme starting with digit"),
    .init(S + "/product/../admin", "notFound malformed", "dot-dot segment"),
    .init(S + "/product/./p1", "notFound malformed", "dot segment"),
    .init(S + "/product/%2e%2e/admin", "notFound malformed", "encoded dot-dot"),
    .init(S + "/product/%2E", "notFound malformed", "encoded dot uppercase"),
    .init(S + "/product/.%2e", "notFound malformed", "half-encoded dot-dot"),
    .init("storefront://%2e%2e/product", "notFound malformed", "encoded dot-dot as custom host"),
    .init(S + "/product/p1%zz", "notFound malformed", "bad percent hex"),
    .init(S + "/product/p1%", "notFound malformed", "percent at end"),
    .init(S + "/product/p1%4", "notFound malformed", "truncated percent"),
    .init(S + "/product/%C3%28", "notFound malformed", "invalid UTF-8 sequence"),
    .init(S + "/product/%FF", "notFound malformed", "0xFF byte"),
    .init(S + "/product/%ED%A0%80", "notFound malformed", "UTF-16 surrogate in UTF-8"),
    .init(S + "/product/%C0%AF", "notFound malformed", "overlong UTF-8 slash"),
    .init(S + "/product/p1%00", "notFound malformed", "encoded NUL"),
    .init(S + "/orders/42%00", "notFound malformed", "encoded NUL after int"),
    .init(S + "/product/p1%7F", "notFound malformed", "encoded DEL"),
    .init(S + "/product/p1\u{0}", "notFound malformed", "raw NUL"),
    .init(S + "/product/p1\n", "notFound malformed", "raw line feed"),
    .init(S + "/product/p1\t", "notFound malformed", "raw tab"),
    .init(S + "/product/p 1", "notFound malformed", "raw space"),
    .init(S + "/product/pé", "notFound malformed", "raw non-ASCII"),
    .init("https://storefront.example\\product\\p1", "notFound malformed", "backslashes"),
    .init(S + "/product/<script>", "notFound malformed", "angle brackets"),
    .init(S + "/search?q=%C3%28", "notFound malformed", "invalid UTF-8 in query"),
    .init(S + "/search?q=%0D%0ASet-Cookie:x", "notFound malformed", "CRLF injection in query"),
    .init(S + "/search?q=%", "notFound malformed", "bad percent in query"),
    .init(S + "/search?utm=%FF", "notFound malformed", "invalid UTF-8 in unused query item"),
    .init(S + "/search?q=" + String(repeating: "x", count: 2100), "notFound malformed", "over 2048 bytes"),
    .init(exactly2048 + "/", "notFound malformed", "2049 bytes"),
]

@Suite("Resolution table: storefront")
struct StorefrontResolutionTests {
    @Test(arguments: storefrontRows)
    func resolves(_ row: ResolutionRow) {
        row.check(Fixtures.storefront)
    }
}
