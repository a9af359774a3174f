import Foundation
import Importing
import LibraryTestSupport
import RouteEngine
import Testing

/// The import's rules, row by row, on the storefront's routes and two builds that claim the
/// short-link host: what each kind of row becomes, the fallback rule, the report's reasons,
/// and a second import of the same file changing nothing. (The 500-link Takeout fixture,
/// published and landed on a live daemon, is `Tests/Scripts/import-check.py`.)
@Suite("Importing short links")
struct LinkImportTests {
    static let host = "links.storefront.example"
    static let schemas: [Schema] = ["schema-ios-5.2.0.json", "schema-ios-5.3.0.json"].map { file in
        guard case .object(var object) = Fixtures.json(file: "manifests/storefront/" + file) else { fatalError() }
        object["hosts"] = ["storefront.example", "www.storefront.example", .string(host)]
        return Fixtures.schema(.object(object))
    }
    static let header = "Short link,Link,apn,afl,amv,ibi,ifl,ius,ipfl,ipbi,isi,imv,efr,ofl,st,sd,si,utm_source,utm_medium,utm_campaign,utm_term,utm_content,at,ct,mt,pt,Archived,Link name,Created\n"
    static let now = Fixtures.date("2026-06-01T00:00:00Z")

    /// A Takeout row: the short link's path, the deep link and the named columns.
    static func row(_ path: String, _ deep: String, _ columns: [String: String] = [:], host: String = host) -> String {
        let names = header.dropLast().split(separator: ",").map(String.init)
        var fields = Array(repeating: "", count: names.count)
        fields[0] = "https://\(host)\(path)"
        fields[1] = deep
        for (name, value) in columns { fields[names.firstIndex(of: name)!] = value }
        return fields.map { $0.contains(where: { ",\"\n\r".contains($0) }) ? "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : $0 }
            .joined(separator: ",") + "\n"
    }

    static func run(_ rows: [String], routes: JSONValue = Fixtures.storefrontRoutesJSON, source: LinkImport.Source = .firebase) throws -> (document: JSONValue, report: LinkImport.Report) {
        let text = (source == .firebase ? header : "") + rows.joined()
        return try LinkImport(source: source, host: host).run(Array(text.utf8), routes: routes, schemas: schemas, now: now)
    }

    static func route(_ id: String, in document: JSONValue) -> JSONValue? {
        document["routes"]?.arrayValue?.first { $0["id"]?.stringValue == id }
    }

    @Test("each kind of row: imported or reported by its reason")
    func reasons() throws {
        let (document, report) = try Self.run([
            Self.row("/abc12", "https://storefront.example/product/p42"),
            Self.row("/ABC12", "https://storefront.example/product/p42"),
            Self.row("/gone", "https://storefront.example/cart", ["Archived": "true"]),
            Self.row("/zz", "https://storefront.example/cart", host: "storefront.page.link"),
            Self.row("/other", "https://storefront.example/cart", host: "elsewhere.example"),
            Self.row("/nothing", "https://storefront.example/no/such/page"),
            Self.row("/nn", "https://storefront.example/new"),
            Self.row("/a/../b", "https://storefront.example/cart"),
            Self.row("/q?x=1", "https://storefront.example/cart"),
            Self.row("/bad", "not a link"),
            Self.row("/cart", "https://storefront.example/cart"),
            Self.row("/b1", "https://storefront.example/cart", host: "storefront.app.link"),
            Self.row("/search", "https://storefront.example/product/p42"),
            Self.row("/metrics", "https://storefront.example/cart"),
            Self.row("/V1/x", "https://storefront.example/cart"),
            Self.row("/old-sale", "https://storefront.example/sale/spring"),
            Self.row("/bad-id", "https://storefront.example/product/P42"),
            Self.row("/aBc1", "https://storefront.example/product/p3"),
            Self.row("/AbC1", "https://storefront.example/orders/77"),
        ])
        let reasons = report.skipped.map { "\($0.row) \($0.reason.rawValue)" }
        #expect(reasons == ["3 duplicate", "4 archived", "5 cannotMove", "6 otherHost", "7 unanswered", 
                            "9 badShortLink", "10 badShortLink", "11 badDeepLink", "12 answered", "13 cannotMove",
                            "14 taken", "15 reserved", "16 reserved", "17 unanswered", "18 unanswered", "19 caseCollision", "20 caseCollision"])
        #expect(report.skipped.first { $0.reason == .unanswered }?.shape == "/no/such/page")
        // /new opens on 5.3.0 alone (5.2.0 has no newArrivals): imported, and said.
        #expect(report.imported.map(\.routeID) == ["link.abc12", "link.nn"])
        #expect(report.imported.last?.builds == ["ios 5.3.0"] && report.imported.last?.notes.last?.contains("ios 5.2.0") == true)
        let made = try #require(Self.route("link.abc12", in: document))
        #expect(made["patterns"] == ["/abc12"])
        #expect(made["hosts"] == [.string(Self.host)])
        #expect(made["destination"] == "product")
        #expect(made["params"] == ["id": ["const": "p42"]])
        #expect(report.rows == 19)
        let detail = { (row: Int) in report.skipped.first { $0.row == row }?.detail ?? "" }
        #expect(detail(13).contains("Branch's domain"))
        #expect(detail(14).contains("opens something else"), "the QR code /search would open search, not the product")
        // Each unanswered link says why: a route that ended, a param that does not fit.
        #expect(detail(17).contains("spring-sale") && detail(17).contains("ended"))
        #expect(detail(18).contains("param does not fit"))
        // The same short link again, differing only in case, with the same deep link: the first is kept.
        #expect(detail(3).contains("row 2"))
        #expect(Validator.validate(document, against: Self.schemas, now: Self.now).isValid)
    }

    @Test("the new route opens what its deep link opened, on every build, through every kind of param")
    func sameDestination() throws {
        let links = ["/s": "https://storefront.example/search?q=red%20shoes", "/o": "https://storefront.example/orders/17",
                     "/c": "storefront://category/shoes", "/h": "https://storefront.example/"]
        let (document, report) = try Self.run(links.sorted { $0.key < $1.key }.map { Self.row($0.key, $0.value) })
        #expect(report.imported.count == 4)
        let before = Fixtures.routes(Fixtures.storefrontRoutesJSON), after = Fixtures.routes(document)
        for schema in Self.schemas {
            let old = Fixtures.resolver(schema, before), new = Fixtures.resolver(schema, after)
            for (path, deep) in links {
                let context = ResolutionContext(satisfied: ["auth"], now: Self.now)
                guard case .proceed(let was) = old.resolve(url: deep, context: context),
                      case .proceed(let now) = new.resolve(url: "https://\(Self.host)\(path)", context: context) else {
                    Issue.record("\(path) on \(schema.buildName) does not proceed"); continue
                }
                #expect(now.destination == was.destination && now.params == was.params, "\(path) on \(schema.buildName)")
            }
        }
    }

    @Test("a deep link the builds open differently is reported, not guessed")
    func differs() throws {
        // 5.2.0 has no newArrivals, so its /new route is left out there and /:slug takes the link.
        guard case .object(var top) = Fixtures.storefrontRoutesJSON, case .array(var list)? = top["routes"] else { return }
        list.append(["id": "catch-all", "patterns": ["/:slug"], "destination": "category"])
        top["routes"] = .array(list)
        let (_, report) = try Self.run([Self.row("/nn", "https://storefront.example/new"), Self.row("/c2", "https://storefront.example/shoes")], routes: .object(top))
        #expect(report.skipped.map(\.reason) == [.differsByBuild])
        #expect(report.skipped.first?.detail.contains("ios 5.3.0 opens category") == true || report.skipped.first?.detail.contains("opens newArrivals") == true)
        #expect(report.imported.map(\.routeID) == ["link.c2"])
    }

    @Test("the deep link's route's window comes with it: the short link ends when what it opens does")
    func windows() throws {
        let (document, report) = try LinkImport(source: .firebase, host: Self.host).run(
            Array((Self.header + Self.row("/spring", "https://storefront.example/sale/spring")).utf8),
            routes: Fixtures.storefrontRoutesJSON, schemas: Self.schemas, now: Fixtures.date("2026-03-15T00:00:00Z"))
        #expect(report.imported.map(\.routeID) == ["link.spring"])
        #expect(Self.route("link.spring", in: document)?["validUntil"] == "2026-04-01T00:00:00Z")
        #expect(Self.route("link.spring", in: document)?["validFrom"] == "2026-03-01T00:00:00Z")
    }

    @Test("one fallback where Firebase's three agree; the platform rule where they differ")
    func fallbacks() throws {
        let same = "https://storefront.example/help"
        let (document, report) = try Self.run([
            Self.row("/f1", "https://storefront.example/cart", ["ofl": same, "ifl": same, "afl": same]),
            Self.row("/f2", "https://storefront.example/cart", ["ofl": same]),
            Self.row("/f3", "https://storefront.example/cart", ["ifl": same, "afl": "https://storefront.example/android"]),
            Self.row("/f4", "https://storefront.example/cart", ["ofl": "https://127.0.0.1/x", "ifl": "https://127.0.0.1/x", "afl": "https://127.0.0.1/x"]),
        ])
        #expect(Self.route("link.f1", in: document)?["fallbackURL"] == .string(same))
        #expect(Self.route("link.f2", in: document)?["fallbackURL"] == nil)
        #expect(Self.route("link.f3", in: document)?["fallbackURL"] == nil)
        #expect(Self.route("link.f4", in: document)?["fallbackURL"] == nil)
        #expect(report.imported.first { $0.routeID == "link.f2" }?.notes.first?.contains("differ") == true)
        #expect(report.imported.first { $0.routeID == "link.f4" }?.notes.first?.hasPrefix("Fallback dropped") == true)
    }

    @Test("the social title, description and image become the preview; one that breaks a rule is dropped and said")
    func previews() throws {
        let (document, report) = try Self.run([
            Self.row("/p1", "https://storefront.example/cart", ["st": "Your cart", "sd": "Come back", "si": "https://cdn.storefront.example/c.png"]),
            Self.row("/p2", "https://storefront.example/cart", ["st": "two\nlines", "sd": "fine"]),
            Self.row("/p3", "https://storefront.example/cart", ["st": "a\u{202E}b", "utm_campaign": "spring\u{202E}"]),
        ])
        #expect(Self.route("link.p1", in: document)?["preview"] == ["title": "Your cart", "description": "Come back", "image": "https://cdn.storefront.example/c.png"])
        #expect(Self.route("link.p2", in: document)?["preview"] == ["description": "fine"], "only the title that breaks a rule is dropped")
        #expect(Self.route("link.p3", in: document)?["preview"] == nil)
        #expect(report.imported.count == 3)
        // What the row says for people goes to notes, without its control and bidi characters;
        // a UTM value that is not plain is dropped, and said.
        let notes = try #require(Self.route("link.p3", in: document)?["notes"]?.stringValue)
        #expect(!notes.unicodeScalars.contains { LinkPreview.isControl($0) })
        #expect(Self.route("link.p3", in: document)?["utm"] == nil)
        #expect(report.imported.last?.notes.contains { $0.hasPrefix("utm_campaign dropped") } == true)
    }

    @Test("the UTM items are kept on the route, for the landing to pass on")
    func utm() throws {
        let (document, _) = try Self.run([Self.row("/u1", "https://storefront.example/cart", ["utm_source": "qr", "utm_medium": "print", "utm_campaign": "box-2026"])])
        #expect(Self.route("link.u1", in: document)?["utm"] == ["source": "qr", "medium": "print", "campaign": "box-2026"])
        #expect(Validator.validate(document, against: Self.schemas, now: Self.now).isValid)
    }

    @Test("importing the same file into its own result changes nothing")
    func again() throws {
        let rows = [Self.row("/abc12", "https://storefront.example/product/p42", ["st": "Shoes"]), Self.row("/s", "https://storefront.example/search?q=x")]
        let first = try Self.run(rows)
        let second = try Self.run(rows, routes: first.document)
        #expect(second.document == first.document)
        #expect(second.report.imported.allSatisfy(\.unchanged) && second.report.imported.count == 2)
        // A route edited since is left as it is, and said.
        guard case .object(var top) = first.document, case .array(var list)? = top["routes"] else { return }
        let index = list.firstIndex { $0["id"] == "link.s" }!
        guard case .object(var edited) = list[index] else { return }
        edited["destination"] = "cart"
        edited["params"] = nil
        list[index] = .object(edited)
        top["routes"] = .array(list)
        let third = try Self.run(rows, routes: .object(top))
        #expect(third.document == .object(top))
        #expect(third.report.skipped.map(\.reason) == [.taken])
    }

    @Test("a plain CSV, with or without a header; a file without the columns is refused")
    func plain() throws {
        let bare = try Self.run(["https://\(Self.host)/x1,https://storefront.example/cart,Cart,,\n"], source: .csv)
        #expect(bare.report.imported.map(\.routeID) == ["link.x1"])
        #expect(Self.route("link.x1", in: bare.document)?["preview"] == ["title": "Cart"])
        let named = try LinkImport(source: .csv, host: Self.host).run(Array("short_url,long_url,tags\nhttps://\(Self.host)/x2,https://storefront.example/cart,a\n".utf8),
                                                                      routes: Fixtures.storefrontRoutesJSON, schemas: Self.schemas, now: Self.now)
        #expect(named.report.imported.map(\.routeID) == ["link.x2"])
        #expect(named.report.unknownColumns == ["tags"])
        #expect(throws: LinkImport.Failure.self) {
            try LinkImport(source: .firebase, host: Self.host).run(Array("a,b\n1,2\n".utf8), routes: Fixtures.storefrontRoutesJSON, schemas: Self.schemas, now: Self.now)
        }
        #expect(throws: LinkImport.Failure.hostNotDeclared("elsewhere.example")) {
            try LinkImport(source: .firebase, host: "elsewhere.example").run(Array(Self.header.utf8), routes: Fixtures.storefrontRoutesJSON, schemas: Self.schemas, now: Self.now)
        }
        #expect(throws: LinkImport.Failure.badHost("https://x/")) { try LinkImport(source: .firebase, host: "https://x/") }
    }

    @Test("route ids: the path's segments, a hash where a byte was lost or case would collide")
    func ids() throws {
        let (_, report) = try Self.run([Self.row("/a/b", "https://storefront.example/cart"), Self.row("/Sale!", "https://storefront.example/cart"),
                                        Self.row("/x_y", "https://storefront.example/cart"), Self.row("/x.y", "https://storefront.example/cart")])
        let ids = report.imported.map(\.routeID)
        #expect(ids[0] == "link.a.b")
        #expect(ids[1].hasPrefix("link.Sale__") && ids[1].utf8.count == "link.Sale__".utf8.count + 8)
        #expect(ids[2].hasPrefix("link.x_y_") && ids[3].hasPrefix("link.x.y_"))
        #expect(Set(ids).count == 4 && ids.allSatisfy(RouteSpec.isValidID))
    }
}
