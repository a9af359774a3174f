import LinkLanding
import Testing
import TestSupport

@Suite("Visitors by User-Agent")
struct VisitorTests {
    static let rows: [(String, String?, Visitor)] = [
        ("iPhone Safari", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1", .ios),
        ("iPad in the Instagram browser", "Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 300.0", .ios),
        ("iPod", "Mozilla/5.0 (iPod touch; CPU iPhone OS 12_5 like Mac OS X)", .ios),
        ("Android Chrome", "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Mobile Safari/537.36", .android),
        ("Android WebView in Facebook", "Mozilla/5.0 (Linux; Android 13; SM-S911B; wv) AppleWebKit/537.36 Version/4.0 Chrome/120.0 Mobile Safari/537.36 [FB_IAB/FB4A]", .android),
        ("lower case android", "some-bot (android)", .android),
        ("desktop Chrome", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36", .other),
        ("desktop Safari, and iPadOS asking for desktop sites", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 Version/17.4 Safari/605.1.15", .other),
        ("curl", "curl/8.5.0", .other),
        ("no User-Agent", nil, .other),
        ("empty", "", .other),
        ("Windows Phone claims both", "Mozilla/5.0 (Windows Phone 10.0; Android 6.0.1; Microsoft; Lumia 950) like iPhone OS 7_0_3 Edge/15.15063", .other),
        ("the word past the scanned bytes is not read", String(repeating: "x", count: Visitor.scannedBytes) + " iPhone", .other),
        ("a near miss", "iPhon Androi", .other),
        ("non-ASCII around it", "\u{0130}Phone\u{FFFF} ANDROİD", .other),
    ]

    @Test(arguments: rows)
    func classifies(_ row: (String, String?, Visitor)) {
        #expect(Visitor(userAgent: row.1) == row.2, "\(row.0)")
    }

    /// The word-at-a-time scan agrees with the rules read plainly (lowercase, then search),
    /// whatever the offsets: the words at every position against an 8-byte word's edges, in
    /// mixed case, beside look-alikes.
    @Test func theScanAgreesWithThePlainRules() {
        var generator = SplitMix(seed: 7)
        let pieces = ["windows phone", "WINDOWS PHONE", "windows", "android", "AnDrOiD", "androi", "iphone", "iPad", "IPOD", "ipa", "i",
                      "a", "w", " ", "Mozilla/5.0 (", "; ", ")", "xxxxxxx", "\u{e9}"]
        for _ in 0..<5_000 {
            let text = (0..<Int(generator.next() % 12)).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }.joined()
            let scanned = String(decoding: text.utf8.prefix(Visitor.scannedBytes), as: UTF8.self).lowercased()
            let plain: Visitor = scanned.contains("windows phone") ? .other : scanned.contains("android") ? .android
                : ["iphone", "ipad", "ipod"].contains(where: scanned.contains) ? .ios : .other
            #expect(Visitor(userAgent: text) == plain, "\(text)")
        }
    }
}

@Suite("App versions in order")
struct VersionOrderTests {
    static let rows: [(String, String, Bool)] = [
        ("5.2.0", "5.3.0", true), ("5.3.0", "5.2.0", false), ("5.9.0", "5.10.0", true), ("5.10.0", "5.9.0", false),
        ("5.3.0", "5.3.0", false), ("5.3", "5.3.0.1", true), ("5.3.0-beta", "5.3.0", true), ("5.3.0", "5.3.0-beta", false),
        ("5.3.0-alpha", "5.3.0-beta", true), ("5.3.a", "5.3.1", true), ("10", "9", false), ("1.0+build2", "1.0+build10", false),
        ("05.1", "5.2", true),
    ]

    @Test(arguments: rows)
    func orders(_ row: (String, String, Bool)) {
        #expect(VersionOrder.precedes(row.0, row.1) == row.2, "\(row.0) before \(row.1)")
    }
}
