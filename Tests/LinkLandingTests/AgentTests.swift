import LinkLanding
import Testing
import TestSupport

@Suite("Agents by User-Agent: people, preview crawlers, bots")
struct AgentTests {
    static let rows: [(String, String?, Agent)] = [
        ("iPhone Safari", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1", .person),
        ("Android Chrome", "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Mobile Safari/537.36", .person),
        ("Instagram's browser is a person's", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 307.0.2.18.107", .person),
        ("Facebook's browser is a person's", "Mozilla/5.0 (Linux; Android 13; SM-S911B; wv) AppleWebKit/537.36 Chrome/120.0 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/441.0.0.33.113;]", .person),
        ("LinkedIn's app browser is a person's", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 [LinkedInApp]/9.29.8", .person),
        ("Twitter's app browser is a person's", "Mozilla/5.0 (iPhone; CPU iPhone OS 16_5 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Twitter for iPhone/9.67", .person),
        ("a phone named CUBOT is a person's", "Mozilla/5.0 (Linux; Android 10; CUBOT_X30) AppleWebKit/537.36 Chrome/118.0 Mobile Safari/537.36", .person),
        ("curl names no bot", "curl/8.5.0", .person),
        ("no User-Agent", nil, .person),
        ("empty", "", .person),
        ("one byte", "b", .person),
        ("Facebook's crawler", "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", .previewCrawler),
        ("iMessage names three", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko) Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0", .previewCrawler),
        ("Slack's unfurler", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", .previewCrawler),
        ("Slack's plain bot is a link checker", "Slackbot 1.0 (+https://api.slack.com/robots)", .bot),
        ("LinkedIn", "LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)", .previewCrawler),
        ("WhatsApp", "WhatsApp/2.23.20.0 A", .previewCrawler),
        ("Telegram", "TelegramBot (like TwitterBot)", .previewCrawler),
        ("Discord", "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)", .previewCrawler),
        ("Applebot", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)", .previewCrawler),
        ("Pinterest", "Pinterest/0.2 (+https://www.pinterest.com/bot.html)", .previewCrawler),
        ("reddit", "Mozilla/5.0 (compatible; redditbot/1.0; +http://www.reddit.com/feedback)", .previewCrawler),
        ("Teams and Skype", "Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5 skype-url-preview@microsoft.com", .previewCrawler),
        ("Bluesky", "Mozilla/5.0 (compatible; Bluesky Cardyb/1.1; +mailto:support@bsky.app)", .previewCrawler),
        ("Mastodon", "http.rb/5.1.1 (Mastodon/4.2.1; +https://mastodon.social/)", .previewCrawler),
        ("Googlebot", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", .bot),
        ("Bing", "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", .bot),
        ("a monitor", "Mozilla/5.0 (compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)", .bot),
        ("headless Chrome", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36", .bot),
        ("any contact address in the name", "SomeFetcher/3 (+https://fetcher.example/about)", .bot),
        ("upper case", "FACEBOOKEXTERNALHIT/1.1", .previewCrawler),
        ("a bot name first, a preview name after: the card", "Googlebot/2.1 then WhatsApp/2.0", .previewCrawler),
        ("the last two bytes", "xbot/", .bot),
        ("a name past the scanned bytes is not read", String(repeating: "x", count: Visitor.scannedBytes - 3) + "WhatsApp/2", .person),
        ("a near miss", "facebookexternalhi Googlebo", .person),
        ("non-ASCII around it", "\u{0130}whatsapp/\u{FFFF}", .previewCrawler),
    ]

    @Test(arguments: rows)
    func classifies(_ row: (String, String?, Agent)) {
        #expect(Agent(userAgent: row.1) == row.2, "\(row.0)")
    }

    /// The pair-table scan agrees with the rules read plainly (lowercase the scanned bytes,
    /// then search for each token), for texts made of tokens, their halves and filler.
    @Test func theScanAgreesWithThePlainRules() {
        var generator = SplitMix(seed: 11)
        let tokens = Agent.previewTokens + Agent.botTokens
        let pieces = tokens + tokens.map { String($0.prefix(max(2, $0.count - 1))) } + tokens.map { $0.uppercased() }
            + ["Mozilla/5.0 (", "; ", ")", " ", "b", "o", "t", "/", "+", "xxxxxxx", "\u{e9}", "Android", "iPhone"]
        for _ in 0..<5_000 {
            let text = (0..<Int(generator.next() % 8)).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }.joined()
            let bytes = text.utf8.prefix(Visitor.scannedBytes).map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
            func has(_ token: String) -> Bool {
                let needle = Array(token.utf8)
                guard needle.count <= bytes.count else { return false }
                return (0...(bytes.count - needle.count)).contains { Array(bytes[$0..<($0 + needle.count)]) == needle }
            }
            let plain: Agent = Agent.previewTokens.contains(where: has) ? .previewCrawler : Agent.botTokens.contains(where: has) ? .bot : .person
            #expect(Agent(userAgent: text) == plain, "\(text)")
        }
    }

    /// Every documented token is a whole name the scan finds alone, in any case.
    @Test func everyTokenIsFound() {
        for token in Agent.previewTokens { #expect(Agent(userAgent: token.uppercased()) == .previewCrawler, "\(token)") }
        for token in Agent.botTokens { #expect(Agent(userAgent: "x " + token) == .bot, "\(token)") }
    }

    static let inApp: [(String, String?, Bool)] = [
        ("Instagram on an iPhone", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 307.0.2.18.107", true),
        ("Facebook on an iPhone", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 [FBAN/FBIOS;FBAV/440.0.0.26.106;FBBV/559466435]", true),
        ("Facebook on Android", "Mozilla/5.0 (Linux; Android 13; SM-S911B; wv) AppleWebKit/537.36 Version/4.0 Chrome/120.0 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/441.0.0.33.113;]", true),
        ("Messenger", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148 [FB_IAB/MESSENGER;FBAV/440.0]", true),
        ("TikTok on an iPhone", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 musical_ly_32.5.0 JsSdk/2.0 NetType/WIFI", true),
        ("TikTok on Android", "Mozilla/5.0 (Linux; Android 12; Pixel 6 Build/SQ3A; wv) AppleWebKit/537.36 Chrome/118.0 Mobile Safari/537.36 trill_2023001030 BytedanceWebview/d8a21c6", true),
        ("LinkedIn", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 [LinkedInApp]/9.29.8", true),
        ("Snapchat", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Snapchat/12.60.0.47 (like Safari/8617.1.17.10.9)", true),
        ("LINE", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari Line/13.19.0", true),
        ("WeChat", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 MicroMessenger/8.0.42(0x18002a2f) NetType/WIFI", true),
        ("the Google app on an iPhone", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) GSA/291.0.584285646 Mobile/15E148 Safari/604.1", true),
        ("any Android WebView", "Mozilla/5.0 (Linux; Android 14; Pixel 8; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/124.0 Mobile Safari/537.36", true),
        ("Safari", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1", false),
        ("Chrome on Android", "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Mobile Safari/537.36", false),
        ("Chrome on iOS", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/124.0.6367.88 Mobile/15E148 Safari/604.1", false),
        ("a desktop", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/124.0 Safari/537.36", false),
        ("no User-Agent", nil, false),
    ]

    @Test(arguments: inApp)
    func findsInAppBrowsers(_ row: (String, String?, Bool)) {
        #expect(Agent.isInAppBrowser(userAgent: row.1) == row.2, "\(row.0)")
        #expect(Agent(userAgent: row.1) == .person, "\(row.0): a person's browser")
    }

    @Test func visitorsAreToldApartByPlatformAndAgent() {
        let codes = Set(Visitor.allCases.flatMap { platform in Agent.allCases.flatMap { agent in [false, true].map { LandingVisitor(platform: platform, agent: agent, inApp: $0).code } } })
        #expect(codes.count == Visitor.allCases.count * Agent.allCases.count * 2)
    }
}
