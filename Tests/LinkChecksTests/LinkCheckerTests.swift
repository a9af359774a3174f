import Foundation
import LinkChecks
import RouteEngine
import Testing
import TestSupport

@Suite("LinkChecker: fallbacks and associated-domain files served from loopback")
struct LinkCheckerTests {
    func summary(_ problems: [ValidationProblem]) -> [String] {
        problems.map { "\($0.code.rawValue)@\($0.path)" }
    }

    @Test func theExampleWithGoodFilesHasNoFindings() throws {
        let storefront = try Storefront("good")
        try storefront.serveGoodFiles()
        let checker = LinkChecker(options: storefront.options())
        #expect(checker.check(storefront.routes, against: storefront.schemas) == [])
        // One fallback, two hosts with two files each: five fetches, each once.
        #expect(checker.fetches.load(ordering: .relaxed) == 5)
        #expect(HTTPSFixture.site.requests(host: storefront.host).count == 3)
        #expect(HTTPSFixture.site.requests(host: storefront.wwwHost).count == 2)
    }

    @Test func findingsNameTheRouteThePatternAndTheReason() throws {
        let storefront = try Storefront("bad")
        let site = HTTPSFixture.site
        // /p/* excluded, /orders/:orderId and /deeplink/… never listed.
        try site.put(storefront.host, "/.well-known/apple-app-site-association", """
            {"applinks": {"details": [{"appIDs": ["\(Storefront.appID)"], "components": [
              {"/": "/p/*", "exclude": true}, {"/": "/"}, {"/": "/product/*"}, {"/": "/p/*"}, {"/": "/c/*"}, {"/": "/category/*"},
              {"/": "/search"}, {"/": "/cart"}, {"/": "/orders"}, {"/": "/settings"}, {"/": "/new"}, {"/": "/sale/*"}]}]}}
            """)
        try site.put(storefront.host, "/.well-known/assetlinks.json", """
            [{"relation": ["delegate_permission/common.handle_all_urls"],
              "target": {"namespace": "android_app", "package_name": "example.storefront", "sha256_cert_fingerprints": ["AA:BB"]}}]
            """)
        // Nothing on the www host; no /sale page.
        let problems = LinkChecker(options: storefront.options()).check(storefront.routes, against: storefront.schemas)
        #expect(summary(problems) == [
            "unreachableFallback@routes[9].fallbackURL",
            "associatedDomainMissing@$",  // Apple, www host (hosts in order: "bad-www" < "bad")
            "associatedDomainNotCovering@routes[1].patterns[1]",
            "associatedDomainNotCovering@routes[1].patterns[2]",
            "associatedDomainNotCovering@routes[6].patterns[0]",
            "associatedDomainMissing@$",  // Android, www host
            "associatedDomainWrongApp@$",
        ])
        #expect(problems.allSatisfy { $0.severity == .warning })
        // With linksNotChecked (below), every code the link checks have is shown failing.
        #expect(Set(problems.map(\.code)).union([.linksNotChecked]) == Set(ProblemCode.allCases.filter(\.isFoundByLinkChecks)))
        let messages = problems.map(\.message)
        #expect(messages[0] == "The fallback https://\(storefront.host)/sale of route \"spring-sale\" is unreachable: it answers 404 (Not Found). People without the app would land on an error.")
        #expect(messages[2] == "Route \"product\" (/p/:id) will open in the browser on \(storefront.host), not the app: a link such as https://\(storefront.host)/p/x is excluded by {\"/\":\"/p/*\",\"exclude\":true} in https://\(storefront.host)/.well-known/apple-app-site-association for \(Storefront.appID).")
        #expect(messages[4].contains("a link such as https://\(storefront.host)/orders/x matches none of the paths"))
        #expect(messages[1] == "Universal links to \(storefront.wwwHost) will open in the browser, not the app: https://\(storefront.wwwHost)/.well-known/apple-app-site-association answers 404 (Not Found).")
        #expect(messages[6].hasSuffix("assetlinks.json lists example.storefront with other certificate fingerprints than the schema's."))
    }

    /// Apple's and Google's rules for the file itself, each refused with its reason.
    @Test(arguments: [
        ("redirect", "redirects to https://file-redirect.waymark.test/aasa.json; it must be served directly"),
        ("html", "is served as text/html, not application/json"),
        ("large", "cannot be fetched: the response is larger than 128 KB"),
        ("broken", "is not valid JSON"),
        ("otherApp", "lists ZZZZZ99999.example.other, not ABCDE12345.example.storefront"),
    ])
    func associatedDomainFileRules(_ variant: String, _ reason: String) throws {
        let storefront = try Storefront("file-\(variant.lowercased())")
        try storefront.serveGoodFiles()
        let site = HTTPSFixture.site
        let path = "/.well-known/apple-app-site-association"
        switch variant {
        case "redirect": try site.put(storefront.host, path + ".redirect", "https://\(storefront.host)/aasa.json")
        case "html": try site.put(storefront.host, path, Storefront.componentsFile, contentType: "text/html")
        case "large": try site.put(storefront.host, path, "{\"applinks\": {\"details\": []}, \"pad\": \"" + String(repeating: "x", count: 140_000) + "\"}")
        case "broken": try site.put(storefront.host, path, "{\"applinks\": ")
        default: try site.put(storefront.host, path, Storefront.componentsFile.replacingOccurrences(of: Storefront.appID, with: "ZZZZZ99999.example.other"))
        }
        let problems = LinkChecker(options: storefront.options()).check(storefront.routes, against: storefront.schemas)
        let found = problems.filter { $0.message.contains("https://\(storefront.host)/.well-known/apple-app-site-association") }
        #expect(found.count == 1, "\(problems.map(\.message))")
        #expect(found.first?.message.contains(reason) == true, "\(found.map(\.message))")
    }

    @Test func oneCheckFetchesAtMostItsLimitAndSaysSo() throws {
        let storefront = try Storefront("capped")
        try storefront.serveGoodFiles()
        var options = storefront.options()
        options.maximumFetchesPerCheck = 2
        let checker = LinkChecker(options: options)
        let problems = checker.check(storefront.routes, against: storefront.schemas)
        #expect(problems.map(\.code) == [.linksNotChecked])
        #expect(problems.first?.message.hasPrefix("Only 2 of the 5 addresses these routes name were checked") == true)
        #expect(checker.fetches.load(ordering: .relaxed) == 2)
    }

    @Test func findingsAreErrorsWhenConfigured() throws {
        let storefront = try Storefront("strict")
        var options = storefront.options()
        options.severity = .error
        let problems = LinkChecker(options: options).check(storefront.routes, against: storefront.schemas)
        #expect(!problems.isEmpty)
        #expect(problems.allSatisfy { $0.severity == .error })
        #expect(!ValidationReport(problems).isValid)
    }

    @Test func resultsAreReusedForTheirLifetimeAndNoLonger() throws {
        let storefront = try Storefront("cached")
        try storefront.serveGoodFiles()
        let checker = LinkChecker(options: storefront.options())
        let first = checker.check(storefront.routes, against: storefront.schemas)
        let requests = HTTPSFixture.site.requests(host: storefront.host).count
        #expect(checker.check(storefront.routes, against: storefront.schemas) == first)
        #expect(checker.fetches.load(ordering: .relaxed) == 5)
        #expect(HTTPSFixture.site.requests(host: storefront.host).count == requests)

        var uncached = storefront.options()
        uncached.cacheSeconds = 0
        let fresh = LinkChecker(options: uncached)
        _ = fresh.check(storefront.routes, against: storefront.schemas)
        _ = fresh.check(storefront.routes, against: storefront.schemas)
        #expect(fresh.fetches.load(ordering: .relaxed) == 10)
    }

    /// Options that send `host` to the HTTPS fixture, `parallelism` fetches at once, and a
    /// document of `count` routes whose fallbacks are its `/slow` page, answered after `ms`.
    func slowFallbacks(host: String, count: Int, ms: Int, parallelism: Int) throws -> (LinkCheckOptions, JSONValue) {
        let site = HTTPSFixture.site
        var options = LinkCheckOptions()
        options.fetch = site.options()
        options.parallelism = parallelism
        options.fetch.connectTo = [site.connect(host)]
        let routes = (0..<count).map { index in
            "{\"id\": \"r\(index)\", \"patterns\": [\"/r\(index)\"], \"destination\": \"home\", \"fallbackURL\": \"https://\(host)/slow?ms=\(ms)&n=\(index)\"}"
        }
        let document = try JSONParser().parse("{\"format\": \"waymark.routes/1\", \"app\": \"storefront\", \"routes\": [\(routes.joined(separator: ","))]}")
        return (options, document)
    }

    @Test func fetchesRunInParallelUpToTheBound() throws {
        let site = HTTPSFixture.site
        let host = "parallel.waymark.test"
        let (options, document) = try slowFallbacks(host: host, count: 8, ms: 250, parallelism: 3)
        let problems = LinkChecker(options: options).check(document, against: [])
        #expect(problems == [])
        // The most requests in progress at once, from the fixture's log. A slow request's
        // END is logged just before its answer is sent (so a request started once that
        // answer is in is always logged after it); the last may lag the check a little.
        var lines = site.log()
        for _ in 0..<100 where lines.filter({ $0.hasPrefix("END \(host) ") }).count < 8 {
            Thread.sleep(forTimeInterval: 0.02)
            lines = site.log()
        }
        var inFlight = 0
        var most = 0
        for line in lines where line.hasPrefix("GET \(host) ") || line.hasPrefix("END \(host) ") {
            inFlight += line.hasPrefix("GET") ? 1 : -1
            most = max(most, inFlight)
        }
        #expect(inFlight == 0)
        #expect(most == 3, "at most 3 at once, and 8 requests of 250 ms leave time to reach 3")
    }

    @Test func placesAreBoundedPerPurposeAndHolderAndGivenBackWithTheLastReference() {
        var options = LinkCheckOptions()
        options.maximumChecks = 2
        let checker = LinkChecker(options: options)
        var first = checker.admit("a", for: .validation)
        #expect(first != nil)
        #expect(checker.admit("a", for: .validation) == nil, "one check at a time for one token")
        let second = checker.admit("b", for: .validation)
        #expect(second != nil)
        #expect(checker.admit("c", for: .validation) == nil, "two validations at once in all")
        let publish = checker.admit("c", for: .publish)
        #expect(publish != nil, "publishes have places of their own")
        #expect(checker.checksInProgress(.validation) == 2 && checker.checksInProgress(.publish) == 1)
        first = nil
        #expect(checker.checksInProgress(.validation) == 1)
        #expect(checker.admit("c", for: .validation) != nil)
        withExtendedLifetime((first, second, publish)) {}
    }

    @Test func aCheckAnswersAtItsDeadlineAndHoldsItsPlaceUntilItsFetchesEnd() throws {
        let site = HTTPSFixture.site
        let host = "deadline.waymark.test"
        var (options, document) = try slowFallbacks(host: host, count: 4, ms: 4_000, parallelism: 2)
        options.checkSeconds = 1
        let checker = LinkChecker(options: options)
        var place = checker.admit("marketing", for: .validation)
        let problems = checker.check(document, against: [], in: place)
        // Every fetch takes 4 s: none is done at the 1 s deadline, and two are under way.
        #expect(problems.map(\.code) == [.linksNotChecked])
        #expect(problems.first?.message.hasPrefix("Only 0 of the 4 addresses these routes name could be checked within 1 s") == true,
                "\(problems.map(\.message))")
        place = nil
        #expect(checker.checksInProgress(.validation) == 1, "the place is held while its fetches run out")
        for _ in 0..<1_000 where checker.checksInProgress(.validation) > 0 { Thread.sleep(forTimeInterval: 0.02) }
        #expect(checker.checksInProgress(.validation) == 0, "and given back when they end")
        let started = site.log().filter { $0.hasPrefix("GET \(host) ") }.count
        #expect(started == 2, "no fetch starts after the deadline: \(started)")
        #expect(checker.fetches.load(ordering: .relaxed) == 2, "only the fetches that ran are counted")
        // What the two found after the deadline is kept: the next check has them at once.
        let again = checker.check(document, against: [], in: nil)
        #expect(again.first?.message.hasPrefix("Only 2 of the 4 addresses these routes name could be checked within 1 s") == true,
                "\(again.map(\.message))")
        withExtendedLifetime(place) {}
    }
}
