import Foundation
import HTTPCore
import RouteEngine

/// A self-contained HTML page served as it is (the dashboard, a landing page): its
/// Content-Security-Policy allows exactly its own inline `<script>` and `<style>`, by hash,
/// and nothing from anywhere else unless `extra` says so.
enum InlinePage {
    /// The policy for `page`: `default-src 'none'`, its scripts and styles by hash, `extra`
    /// directives, and no base, forms or framing.
    static func policy(for page: [UInt8], extra: [String] = []) -> String {
        (["default-src 'none'", "script-src " + hashSources(of: "script", in: page), "style-src " + hashSources(of: "style", in: page)]
            + extra + ["base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"])
            .joined(separator: "; ")
    }

    /// The headers every such page is served with, besides its caching.
    static func headers(policy: String) -> [(String, String)] {
        [("Content-Type", "text/html; charset=utf-8"), ("Content-Security-Policy", policy),
         ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer")]
    }

    /// `'sha256-…'` for the content of every `<tag>…</tag>` in the page (CSP Level 3 §8.3:
    /// the hash of the element's text exactly as written); `'none'` when there is none.
    static func hashSources(of tag: String, in page: [UInt8]) -> String {
        let open = Array("<\(tag)>".utf8), close = Array("</\(tag)>".utf8)
        var sources: [String] = []
        var index = 0
        while let start = find(open, in: page, from: index), let end = find(close, in: page, from: start + open.count) {
            let content = Array(page[(start + open.count)..<end])
            sources.append("'sha256-\(Data(SHA256.hash(content)).base64EncodedString())'")
            index = end + close.count
        }
        return sources.isEmpty ? "'none'" : sources.joined(separator: " ")
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        var index = start
        while index + needle.count <= haystack.count {
            if haystack[index] == needle[0], haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}
