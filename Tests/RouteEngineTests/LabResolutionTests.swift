import RouteEngine
import TestSupport
import Testing

/// The lab app: precedence, backtracking, rest captures, every param type, scopes and windows.
let labRows: [ResolutionRow] = [
    .init("lab://", "proceed root root", "root"),
    .init("lab://items/3", "proceed item item id=3", "param"),
    .init("lab://items/-5", "proceed item item id=-5", "negative min"),
    .init("lab://items/5", "proceed item item id=5", "max"),
    .init("lab://items/0", "proceed item item id=0", "zero"),
    .init("lab://items/6", "notFound validationFailed item", "above max"),
    .init("lab://items/-6", "notFound validationFailed item", "below min"),
    .init("lab://items/-0", "notFound validationFailed item", "negative zero"),
    .init("lab://items/new", "proceed special special", "literal beats param"),
    .init("lab://items/NEW", "proceed special special", "literal beats param, any case"),
    .init("lab://items/x/y", "proceed files files path=x/y", "rest takes two segments"),
    .init("lab://items/x/y/z", "proceed files files path=x/y/z", "rest takes many segments"),
    .init("lab://items/3/edit", "gated auth item-edit", "literal after param"),
    .init("lab://items/3/edit", "proceed item-edit itemEdit id=3", auth: true, "literal after param, logged in"),
    .init("lab://items/3/Edit", "gated auth item-edit", "literal after param, any case"),
    .init("lab://items/x/edit", "notFound validationFailed item-edit", "broken link is not hidden by gate"),
    .init("lab://items/3/other", "proceed files files path=3/other", "param dead-ends, rest takes it"),
    .init("lab://items/new/edit", "notFound validationFailed item-edit", "literal dead-ends, backtrack to param"),
    .init("lab://a/b/c", "proceed special special", "all literals"),
    .init("lab://a/b/d", "proceed files files path=a", "literal branch dead-ends, param wins"),
    .init("lab://z/b/d", "proceed files files path=z", "param branch"),
    .init("lab://a/b", "notFound unknownRoute", "prefix only"),
    .init("lab://a/b/c/d", "notFound unknownRoute", "too deep"),
    .init("lab://kind/a", "proceed kind kind k=a", "enum value"),
    .init("lab://kind/b", "proceed kind kind k=b", "other enum value"),
    .init("lab://kind/A", "notFound validationFailed kind", "enum is case-sensitive"),
    .init("lab://kind/c", "notFound validationFailed kind", "not an enum value"),
    .init("lab://t/123e4567-e89b-12d3-a456-426614174000", "proceed ticket ticket t=123e4567-e89b-12d3-a456-426614174000", "uuid"),
    .init("lab://t/123E4567-E89B-12D3-A456-426614174000", "proceed ticket ticket t=123E4567-E89B-12D3-A456-426614174000",
          "uuid keeps its case"),
    .init("lab://t/123e4567e89b12d3a456426614174000", "notFound validationFailed ticket", "uuid without hyphens"),
    .init("lab://t/123e4567-e89b-12d3-a456-42661417400g", "notFound validationFailed ticket", "uuid with non-hex"),
    .init("lab://t/123e4567-e89b-12d3-a456-4266141740001", "notFound validationFailed ticket", "uuid too long"),
    .init("https://m.lab.example/m", "proceed mobile mobileOnly", "host-restricted route on its host"),
    .init("https://lab.example/m", "notFound unknownRoute", "host-restricted route on another host"),
    .init("lab://m", "notFound unknownRoute", "host-restricted route by scheme"),
    .init("lab://s", "proceed scheme-only special", "scheme-restricted route by scheme"),
    .init("https://lab.example/s", "notFound unknownRoute", "scheme-restricted route by host"),
    .init("lab://vault/1", "gated auth vault", "first precondition along the path"),
    .init("lab://vault/1", "gated adult vault", auth: true, "second precondition"),
    .init("lab://vault/1", "gated auth vault", satisfied: ["adult"], "order is fixed: auth first"),
    .init("lab://vault/1", "proceed vault vaultItem n=1", auth: true, satisfied: ["adult"], "all preconditions satisfied"),
    .init("lab://vault/x", "notFound validationFailed vault", "bad param before preconditions"),
    .init("lab://deal", "proceed summer-deal summer", now: "2026-07-01T00:00:00Z", "campaign overrides during its window"),
    .init("lab://deal", "proceed deal special", now: "2026-10-01T00:00:00Z", "general route after the window"),
    .init("lab://deal", "proceed deal special", now: "2026-09-01T00:00:00Z", "general route at window end"),
    .init("lab://deal", "proceed deal special", now: "2026-05-31T23:59:59Z", "general route before window"),
    .init("lab://old", "notFound expired old", "expired window"),
    .init("lab://old", "proceed old special", now: "2020-06-01T00:00:00Z", "inside an old window"),
]

@Suite("Resolution table: lab")
struct LabResolutionTests {
    @Test(arguments: labRows)
    func resolves(_ row: ResolutionRow) {
        row.check(Fixtures.labResolver)
    }

    @Test func tableIsLargeAndHostile() {
        let rows = storefrontRows + labRows
        let hostile = rows.filter { $0.expected.hasPrefix("notFound malformed") || $0.expected.hasPrefix("notFound validationFailed") }
        #expect(rows.count >= 150)
        #expect(hostile.count * 3 >= rows.count)
    }
}
