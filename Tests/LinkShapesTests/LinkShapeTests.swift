import LinkShapes
import RouteEngine
import Testing
import TestSupport

/// The normalisation of unknown links: ordinary links keep their words and lose their ids;
/// hostile ones — e-mail addresses, phone numbers, tokens, UUIDs in any case, percent-encoded
/// personal data, malformed escapes, dot segments — leave nothing of themselves behind.
@Suite("Link shapes")
struct LinkShapeTests {
    @Test("Ordinary links", arguments: [
        ("https://storefront.example/sale/winter", "/sale/winter"),
        ("https://storefront.example/p/12345", "/p/:param"),
        ("https://storefront.example/product/sku-AB12/reviews", "/product/:param/reviews"),
        ("https://storefront.example/", "/"),
        ("https://storefront.example", "/"),
        ("/orders/991/items/3", "/orders/:param/items/:param"),
        ("https://storefront.example/Sale/Spring-Sale", "/sale/spring-sale"),
        ("https://storefront.example/New_Arrivals", "/new_arrivals"),
        ("https://storefront.example/NEW_ARRIVALS", "/:param"),
        ("https://storefront.example/reset/KXQZVBNMWPLR", "/reset/:param"),
        ("https://storefront.example/reset/kxqzvbnmwplrtyhgfdsazx", "/reset/:param"),
        ("https://storefront.example/t/qwrtzpsdfg", "/t/:param"),
        ("https://storefront.example/profile/mary-ann_smith-jones", "/profile/:param"),
        ("https://storefront.example/u/%6A%61%6E%65", "/u/:param"),
        ("https://storefront.example/wintercollection", "/:param"),
        ("https://storefront.example/winter-collection", "/winter-collection"),
        ("https://storefront.example/black-friday-deals", "/:param"),
        ("https://storefront.example/Sale/spring", "/sale/spring"),
        ("https://storefront.example/c/shoes?utm_source=mail&utm_campaign=w26&color=red", "/c/shoes?utm_campaign&utm_source"),
        ("https://storefront.example/c/shoes?UTM_SOURCE=a&utm_source=b", "/c/shoes?utm_source"),
        ("https://storefront.example/c/shoes#reviews", "/c/shoes"),
        ("https://storefront.example//c///shoes/", "/c/shoes"),
        ("https://storefront.example/a/./b/../c", "/a/c"),
        ("storefront://cart", "/cart"),
        ("storefront://product/42", "/product/:param"),
        ("Storefront://Product/p1?utm_source=push", "/product/:param?utm_source"),
        ("https://storefront.example:8443/deals/2026", "/deals/:param"),
        ("https://storefront.example/a/b/c/d/e/f/g/h/i/j", "/a/b/c/d/e/f/g/h/*"),
    ])
    func ordinary(link: String, shape: String) {
        #expect(LinkShape(link: link).description == shape, "\(link)")
    }

    /// Each row: a link, and the personal or secret text that must not appear in its shape.
    @Test("Hostile links: nothing personal survives", arguments: [
        ("https://storefront.example/u/jane.doe@example.com", "jane"),
        ("https://storefront.example/u/jane.doe%40example.com/orders", "example"),
        ("https://storefront.example/invite/JANE.DOE%2540EXAMPLE.COM", "jane"),
        ("https://storefront.example/call/+1-555-123-4567", "555"),
        ("https://storefront.example/call/%2B44%2020%207946%200958", "7946"),
        ("https://storefront.example/call/(555)%20123-4567", "4567"),
        ("https://storefront.example/o/3F2504E0-4F89-11D3-9A0C-0305E82C3301", "3f25"),
        ("https://storefront.example/o/3f2504e0-4f89-11d3-9a0c-0305e82c3301", "3f25"),
        ("https://storefront.example/o/{3F2504E0-4f89-11D3-9a0c-0305E82C3301}", "0305"),
        ("https://storefront.example/reset/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "eyj"),
        ("https://storefront.example/reset/dGhpc2lzYXNlY3JldHRva2Vu", "dghp"),
        ("https://storefront.example/reset/AbCdEfGhIjKlMnOp", "abcd"),
        ("https://storefront.example/s/aaaaaaaaaaaaaaaaaaaaaaaaa", "aaaa"),
        ("https://storefront.example/u/J%C3%BCrgen%20M%C3%BCller", "rgen"),
        ("https://storefront.example/u/%E5%BC%A0%E4%BC%9F", "%e5"),
        ("https://storefront.example/u/jane%20doe", "jane"),
        ("https://storefront.example/u/%ZZjane", "jane"),
        ("https://storefront.example/u/%C3%28", "%c3"),
        ("https://storefront.example/u/jane%2Fdoe", "jane"),
        ("https://storefront.example/p/1?email=jane%40example.com&utm_source=x", "jane"),
        ("https://storefront.example/p/1?token=s3cr3t&utm_campaign=spring", "s3cr3t"),
        ("https://jane:hunter2@storefront.example/cart", "hunter2"),
        ("storefront://jane:hunter2@cart/now", "hunter2"),
        ("storefront://jane.doe@example.com/cart", "jane"),
        ("https://storefront.example/cart#access_token=abc123secret", "abc123"),
        ("https://storefront.example/../../etc/passwd%00", "%00"),
        ("https://storefront.example/card/4111111111111111", "4111"),
        ("https://storefront.example/ip/192.168.0.1", "192"),
        ("https://storefront.example/d/2026-11-24", "2026"),
        ("https://storefront.example/u/jane_doe_1990", "1990"),
    ])
    func hostile(link: String, secret: String) {
        let shape = LinkShape(link: link).description
        #expect(!shape.lowercased().contains(secret.lowercased()), "\(link) → \(shape)")
        #expect(shape.utf8.count <= 8 * 25 + 2 + 80, "bounded")
    }

    @Test("A shape is bounded however long the link")
    func bounded() {
        let long = "https://storefront.example/" + String(repeating: "segment/", count: 10_000) + "?" + String(repeating: "utm_source=1&", count: 10_000)
        let shape = LinkShape(link: long)
        #expect(shape.description == "/segment/segment/segment/segment/segment/segment/segment/segment/*?utm_source")
        #expect(LinkShape(link: "/" + String(repeating: "ab", count: 6)).path == "/:param", "12 letters")
        #expect(LinkShape(link: "/" + String(repeating: "ab", count: 5) + "a").path == "/" + String(repeating: "ab", count: 5) + "a", "11 letters")
        #expect(LinkShape(link: "/abababababa-abababababa").path == "/abababababa-abababababa", "two parts of 11")
    }
}

@Suite("Heavy hitters in fixed memory")
struct HeavyHittersTests {
    @Test("Exact while the keys fit")
    func exactWhenTheyFit() {
        var counts = HeavyHitters<String, Int>(capacity: 4)
        for key in ["a", "b", "a", "c", "a", "b"] { counts.offer(key, note: { 1 }, update: { $0 += 1 }) }
        #expect(counts.top(3).map(\.key) == ["a", "b", "c"] && counts.top(3).map(\.count) == [3, 2, 1])
        #expect(counts.top(3).allSatisfy { $0.error == 0 } && counts.total == 6)
    }

    @Test("A flood of a million random links: memory stays at capacity, the heavy shapes come out on top with their counts")
    func flood() {
        var random = SplitMix(seed: 20_261_124)
        var counts = HeavyHitters<LinkShape, Void>(capacity: 1_000)
        let heavy = (0..<5).map { LinkShape(path: "/campaign/heavy-\(["a", "b", "c", "d", "e"][$0])") }
        var truth = [UInt64](repeating: 0, count: heavy.count)
        let floodSize = 1_000_000
        for _ in 0..<floodSize {
            let roll = random.next() % 100
            if roll < 10 {
                // 10 % of the traffic: five shapes at 2 %, 2 %, 2 %, 2 %, 2 %, with a skew.
                let which = Int(random.next() % 5)
                truth[which] += 1
                counts.offer(heavy[which], note: {}, update: { _ in })
            } else {
                // A scanner: a new shape almost every time.
                counts.offer(LinkShape(path: "/scan/w\(random.next() % 10_000_000)"), note: {}, update: { _ in })
            }
        }
        #expect(counts.count == 1_000, "never more than its capacity")
        #expect(counts.total == UInt64(floodSize))
        let top = counts.top(5)
        #expect(Set(top.map(\.key)) == Set(heavy), "\(top.map(\.key))")
        for entry in top {
            let real = truth[heavy.firstIndex(of: entry.key)!]
            #expect(entry.count >= real && entry.count - entry.error <= real, "\(entry.key): \(entry.count) ± \(entry.error), truly \(real)")
            #expect(entry.error <= UInt64(floodSize / 1_000), "the error is at most total / capacity")
        }
    }
}
