import CivilDate
import SystemIO
import Foundation
import ManifestStore
import RouteEngine
import Telemetry
import Testing
import TestSupport

@Suite("Telemetry endpoints over loopback", .serialized)
struct TelemetryEndpointTests {
    @Test func acceptedEventsAreCountedAndRejectedOnesNamed() throws {
        let service = try LiveService()
        let write = service.tokens[.telemetryWrite]!, read = service.tokens[.telemetryRead]!
        let body = telemetryBody([
            #"{"entry": "universalLink", "outcome": "proceed", "route": "product", "destination": "productDetail"}"#,
            #"{"entry": "scheme", "outcome": "notFound", "reason": "validationFailed", "route": "product", "count": 3}"#,
            #"{"entry": "push", "outcome": "gated", "precondition": "auth", "route": "orders"}"#,
            #"{"entry": "scheme", "outcome": "notFound", "reason": "unknownRoute"}"#,
            #"{"entry": "scheme", "outcome": "notFound", "reason": "unknownRoute", "route": "no-such-route"}"#,
            #"{"entry": "scheme", "outcome": "proceed", "url": "https://storefront.example/p/1?email=a@b.c"}"#,
            #"{"entry": "email", "outcome": "proceed"}"#,
        ])
        let posted = service.call("POST", "/v1/telemetry", token: write, body: body)
        #expect(posted.status == 202, "\(posted.text)")
        #expect(posted.json["accepted"] == .int(5))
        let rejected = posted.json["rejected"]?.arrayValue ?? []
        #expect(rejected.map { $0["index"] } == [.int(5), .int(6)])
        #expect(rejected.first?["error"]?.stringValue?.contains("Raw URLs") == true)

        let counts = service.call("GET", "/v1/telemetry/counts?groupBy=route", token: read)
        #expect(counts.status == 200, "\(counts.text)")
        #expect(counts.json["total"] == .int(7), "resolutions, counting count: 3")
        #expect(counts.json["failures"] == .int(5))
        #expect(counts.json["step"] == .string("1m"))
        #expect((60...61).contains(counts.json["buckets"]?.arrayValue?.count ?? 0), "the last hour in whole minutes, both ends partial")
        let groups = Dictionary(uniqueKeysWithValues: (counts.json["groups"]?.arrayValue ?? []).map {
            ($0["key"]?["route"]?.stringValue ?? "?", $0["total"]?.intValue ?? -1)
        })
        #expect(groups == ["product": 4, "orders": 1, "none": 1, "other": 1])
        let product = counts.json["groups"]?.arrayValue?.first { $0["key"]?["route"] == .string("product") }
        #expect(product?["failureRate"] == .double(0.75))
        #expect(product?["counts"]?.arrayValue?.compactMap(\.intValue).reduce(0, +) == 4)

        let top = service.call("GET", "/v1/telemetry/top?outcome=notFound&by=route&limit=2", token: read)
        #expect(top.status == 200, "\(top.text)")
        #expect(top.json["items"]?.arrayValue?.first?["route"] == .string("product"))
        #expect(top.json["items"]?.arrayValue?.first?["count"] == .int(3))
        #expect(top.json["items"]?.arrayValue?.count == 2)
        #expect(top.json["omitted"] == .int(1))

        let byVersion = service.call("GET", "/v1/telemetry/counts?groupBy=appVersion,revision,platform&outcome=notFound", token: read)
        let key = byVersion.json["groups"]?.arrayValue?.first?["key"]
        #expect(key == .object(["appVersion": "5.3.0", "revision": "1", "platform": "ios"]))
    }

    @Test func metricsExposeResolutionsTelemetryAndRequests() throws {
        let service = try LiveService()
        let body = telemetryBody([
            #"{"entry": "scheme", "outcome": "notFound", "reason": "validationFailed", "route": "product", "count": 3}"#,
            #"{"entry": "push", "outcome": "proceed", "route": "no-such-route"}"#,
            #"{"entry": "push", "outcome": "proceed", "url": "https://x.example/"}"#,
        ], client: #"{"platform": "ios", "appVersion": "5.3.0", "revision": 1, "dropped": 17}"#)
        #expect(service.call("POST", "/v1/telemetry", token: service.tokens[.telemetryWrite]!, body: body).status == 202)
        #expect(service.call("GET", "/v1/manifest?platform=ios&version=5.3.0", token: service.tokens[.manifestRead]!).status == 200)
        let reply = service.call("GET", "/metrics", token: service.tokens[.telemetryRead]!)
        #expect(reply.status == 200)
        #expect(reply["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8")
        let lines = reply.text.split(separator: "\n").map(String.init)
        for line in [
            #"waymark_resolutions_total{platform="ios",outcome="notFound",reason="validationFailed",route="product"} 3"#,
            #"waymark_resolutions_total{platform="ios",outcome="proceed",reason="none",route="other"} 1"#,
            "waymark_telemetry_events_accepted_total 2",
            #"waymark_telemetry_client_dropped_total{platform="ios"} 17"#,
            #"waymark_telemetry_client_dropped_total{platform="android"} 0"#,
            "waymark_telemetry_events_rejected_total 1",
            "waymark_telemetry_batches_total 1",
            "waymark_revision_current 1",
            "waymark_store_revisions 1",
            "waymark_store_schemas 2",
            #"waymark_http_requests_total{method="POST",route="/v1/telemetry",status="202"} 1"#,
            #"waymark_http_requests_total{method="GET",route="/v1/manifest",status="200"} 1"#,
            #"waymark_http_request_duration_seconds_count{method="POST",route="/v1/telemetry"} 1"#,
            #"waymark_http_request_duration_seconds_bucket{method="POST",route="/v1/telemetry",le="+Inf"} 1"#,
        ] {
            #expect(lines.contains(line), "missing: \(line)")
        }
        // Every line is a comment or `name{labels} value` (the text format's grammar, simplified).
        let sample = try Regex(#"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? [0-9.e+-]+$"#)
        for line in lines where !line.hasPrefix("# HELP ") && !line.hasPrefix("# TYPE ") {
            #expect(line.wholeMatch(of: sample) != nil, "not a sample: \(line)")
        }
        // Histogram buckets are cumulative.
        let buckets = lines.filter { $0.hasPrefix(#"waymark_http_request_duration_seconds_bucket{method="GET",route="/v1/manifest""#) }
            .compactMap { Int($0.split(separator: " ").last ?? "") }
        #expect(buckets.count == 13)
        #expect(buckets == buckets.sorted())
        #expect(service.call("GET", "/metrics", token: service.tokens[.manifestRead]!).status == 403)
    }

    @Test func anEventStampedNowIsInTheDefaultRangeEvenAtAMinutesStart() throws {
        let minute = (Int(Date().timeIntervalSince1970) / 60) * 60
        var options = TelemetryStore.Options()
        options.clock = { minute }
        let service = try LiveService(telemetryOptions: options)
        let body = #"{"client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1}, "events": [{"ts": "\#(Timestamp.format(minute))", "entry": "push", "outcome": "proceed", "route": "home"}]}"#
        #expect(service.call("POST", "/v1/telemetry", token: service.tokens[.telemetryWrite]!, body: body).status == 202)
        for path in ["/v1/telemetry/counts", "/v1/telemetry/top"] {
            let reply = service.call("GET", path, token: service.tokens[.telemetryRead]!)
            #expect(reply.json["total"] == .int(1), "\(path): \(reply.text)")
        }
    }

    @Test func unknownClientsAreCountedAsOther() throws {
        let service = try LiveService()
        let body = telemetryBody([#"{"entry": "scheme", "outcome": "proceed", "route": "home"}"#],
                                 client: #"{"platform": "android", "appVersion": "9.9.9", "revision": 42}"#)
        #expect(service.call("POST", "/v1/telemetry", token: service.tokens[.telemetryWrite]!, body: body).status == 202)
        let counts = service.call("GET", "/v1/telemetry/counts?groupBy=appVersion,revision", token: service.tokens[.telemetryRead]!)
        #expect(counts.json["groups"]?.arrayValue?.first?["key"] == .object(["appVersion": "other", "revision": "other"]))
    }

    @Test func aBatchOverTheByteLimitIs413() throws {
        let service = try LiveService()
        let event = #"{"entry": "scheme", "outcome": "notFound", "reason": "unknownRoute", "destination": "\#(String(repeating: "d", count: 120))"}"#
        let body = telemetryBody(Array(repeating: event, count: 900))
        #expect(body.utf8.count < 1 << 20)
        #expect(service.call("POST", "/v1/telemetry", token: service.tokens[.telemetryWrite]!, body: body).status == 202)
        let padded = body + String(repeating: " ", count: (1 << 20) - body.utf8.count + 1)
        let refused = service.call("POST", "/v1/telemetry", token: service.tokens[.telemetryWrite]!, body: padded)
        #expect(refused.status == 413)
        #expect(service.telemetry.currentStatistics.batches == 1)
    }

    @Test func countsSurviveARestartOfTheService() throws {
        let service = try LiveService()
        let body = telemetryBody([#"{"entry": "scheme", "outcome": "notFound", "reason": "expired", "route": "spring-sale"}"#])
        for _ in 0..<3 { #expect(service.call("POST", "/v1/telemetry", token: service.tokens[.telemetryWrite]!, body: body).status == 202) }
        service.telemetry.close()
        let reopened = try TelemetryStore(directory: DataDirectory(path: service.path, subdirectories: [], exclusive: false))
        defer { reopened.close() }
        var query = CountQuery(from: Int(Date().timeIntervalSince1970) - 600, to: Int(Date().timeIntervalSince1970) + 60, step: .minute)
        query.filters = [.route: "spring-sale", .reason: "expired"]
        #expect(reopened.read { $0.window(for: query) }.query(query).total == 3)
    }
}

@Suite("Top by several dimensions, and the dashboard page", .serialized)
struct DashboardTests {
    @Test func topGroupsBySeveralDimensionsWithAFieldForEach() throws {
        let service = try LiveService()
        let body = telemetryBody([
            #"{"entry": "scheme", "outcome": "notFound", "reason": "validationFailed", "route": "product", "count": 3}"#,
            #"{"entry": "push", "outcome": "proceed", "route": "product"}"#,
        ])
        #expect(service.call("POST", "/v1/telemetry", token: service.tokens[.telemetryWrite]!, body: body).status == 202)
        let top = service.call("GET", "/v1/telemetry/top?by=platform,appVersion,route", token: service.tokens[.telemetryRead]!)
        #expect(top.status == 200, "\(top.text)")
        #expect(top.json["by"] == .string("platform,appVersion,route"))
        // share 1.0 is written as 1, and reads back as an integer.
        #expect(top.json["items"] == .array([.object(["platform": "ios", "appVersion": "5.3.0", "route": "product", "count": .int(4), "failures": .int(3),
                                                      "failureRate": .double(0.75), "share": .int(1)])]))
        #expect(top.json["items"]?.arrayValue?.first?["counts"] == nil, "totals only")
    }

    @Test func theDashboardIsOneSelfContainedPageUnderAStrictPolicy() throws {
        let service = try LiveService()
        let page = service.call("GET", "/dashboard")
        #expect(page.status == 200, "the page holds no data: its script asks for a token")
        #expect(page["Content-Type"] == "text/html; charset=utf-8")
        let html = page.text
        #expect(html.hasPrefix("<!DOCTYPE html>"))

        // Self-contained: nothing loaded from anywhere; the only URL is the SVG namespace.
        for reference in ["src=", "href=", "<link", "@import", "url(", "<iframe", "<img"] {
            #expect(!html.contains(reference), "the page loads \(reference)")
        }
        let urls = html.matches(of: try Regex(#"https?://[^\s"'`)]+"#)).map { String(html[$0.range]) }
        #expect(Set(urls) == ["http://www.w3.org/2000/svg"])

        // The policy allows exactly the page's own inline script and style, by hash.
        let policy = try #require(page["Content-Security-Policy"])
        #expect(policy.contains("default-src 'none'") && policy.contains("connect-src 'self'") && policy.contains("frame-ancestors 'none'"))
        for tag in ["script", "style"] {
            let match = try #require(html.firstMatch(of: try Regex("<\(tag)>([\\s\\S]*?)</\(tag)>")))
            let content = try #require(match.output[1].substring)
            let digest = Data(SHA256.hash(Array(content.utf8))).base64EncodedString()
            #expect(policy.contains("\(tag)-src 'sha256-\(digest)'"), "\(tag) hash missing from \(policy)")
        }
        #expect(!policy.contains("unsafe"))

        // Every API path the script reads exists: the counts answer a telemetry:read token, the
        // rollout panel's resource a manifest:read one (404 noRollout: none yet).
        let paths = Set(html.matches(of: try Regex(#""(/v1/[a-z/-]+)""#)).compactMap { $0.output[1].substring.map(String.init) })
        #expect(paths == ["/v1/telemetry/counts", "/v1/telemetry/top", "/v1/telemetry/unknown-links", "/v1/rollout"])
        for path in paths.subtracting(["/v1/rollout"]) { #expect(service.call("GET", path, token: service.tokens[.telemetryRead]!).status == 200) }
        #expect(service.call("GET", "/v1/rollout", token: service.tokens[.routesRead]!).errorCode == "noRollout")

        // Cached by validator; HEAD has no body.
        let etag = try #require(page["ETag"])
        #expect(service.call("GET", "/dashboard", headers: [("If-None-Match", etag)]).status == 304)
        let head = service.call("HEAD", "/dashboard")
        #expect(head.status == 200 && head.body.isEmpty && head["Content-Length"] == String(page.body.count))
    }
}
