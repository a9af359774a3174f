/// What opened a link in a browser, as far as its `User-Agent` says of itself: a person's
/// browser (any in-app browser included), a link-preview crawler that unfurls links shared in
/// a chat or a post, or another declared bot (a search engine, a link checker, a monitor).
/// Only what a program says of itself counts: nothing here tells people apart, and a client
/// that names no bot (`curl`, a script) is counted as a person.
public enum Agent: UInt8, Hashable, Sendable, CaseIterable {
    case person, previewCrawler, bot

    /// The rules, over at most the first `Visitor.scannedBytes` bytes of the field, letters
    /// compared without case: a `previewTokens` token anywhere is `previewCrawler` (many send
    /// several names, iMessage `facebookexternalhit … Twitterbot`, so the preview names win);
    /// else a `botTokens` token anywhere is `bot`; else, or without a `User-Agent`, `person`.
    public init(userAgent: String?) {
        guard var userAgent else {
            self = .person
            return
        }
        self = userAgent.withUTF8 { Self(userAgent: $0) }
    }

    /// The same, from the field's bytes (as a server holds them).
    public init(userAgent bytes: UnsafeBufferPointer<UInt8>) {
        self = Self.classify(userAgent: bytes).agent
    }

    /// The agent and, for a person, whether the browser is an app's own
    /// (`isInAppBrowser`): both in one pass over the field, as a landing asks them.
    public static func classify(userAgent bytes: UnsafeBufferPointer<UInt8>) -> (agent: Agent, inApp: Bool) {
        let found = table.kinds(UnsafeBufferPointer(rebasing: bytes.prefix(Visitor.scannedBytes)))
        let agent: Agent = found & Kind.preview != 0 ? .previewCrawler : found & Kind.bot != 0 ? .bot : .person
        return (agent, agent == .person && found & Kind.inApp != 0)
    }

    /// What a token stands for, as bits of what a scan found.
    enum Kind {
        static let preview: UInt8 = 1, bot: UInt8 = 2, inApp: UInt8 = 4
    }

    /// Link-preview crawlers, as their owners document them: each fetches a shared link to
    /// draw its card, and gets the route's Open Graph card (`docs/landing.md`). Lowercase.
    public static let previewTokens: [String] = [
        "facebookexternalhit", "facebot", "twitterbot", "slackbot-linkexpanding", "slack-imgproxy", "linkedinbot",
        "whatsapp/", "telegrambot", "discordbot", "applebot", "pinterestbot", "pinterest/0.", "redditbot",
        "skypeuripreview", "mastodon/", "cardyb", "snap url preview", "embedly", "iframely", "vkshare",
        "google-pagerenderer", "microsoftpreview", "bitlybot", "zoombot", "line-poker", "kakaotalk-scrap",
    ]

    /// Other declared bots: search engines, archivers, link checkers, monitors, headless
    /// browsers. `+http` and `+mailto` stand for the contact address bots put in their
    /// name by convention (`(compatible; Googlebot/2.1; +http://www.google.com/bot.html)`),
    /// which no person's browser sends. Lowercase.
    public static let botTokens: [String] = [
        "+http", "+mailto", "bot/", "bot.html", "crawler", "spider", "googlebot", "googleother", "google-inspectiontool",
        "adsbot-google", "mediapartners-google", "feedfetcher", "apis-google", "bingbot", "bingpreview", "yandexbot",
        "duckduckbot", "baiduspider", "slackbot", "ahrefs", "semrush", "mj12bot", "dotbot", "petalbot", "gptbot",
        "chatgpt-user", "ccbot", "claudebot", "amazonbot", "bytespider", "headlesschrome", "lighthouse", "pingdom",
        "uptimerobot", "statuscake", "site24x7", "checkly", "archive.org_bot", "ia_archiver", "linkcheck", "w3c_validator",
    ]


    /// In-app browsers, by what their apps add to the `User-Agent`: webviews that do not hand
    /// universal links or App Links to the app they name (`docs/landing.md`, "In-app
    /// browsers"). Lowercase; a token matches as a substring, over `Visitor.scannedBytes`.
    public static let inAppBrowserTokens: [String] = [
        "instagram", "fban/", "fbav/", "fb_iab", "fbios", "musical_ly", "bytedancewebview", "trill_", "tiktok",
        "linkedinapp", "snapchat", "twitter for iphone", "twitterandroid", "line/", "kakaotalk", "micromessenger", "weibo",
        "pinterest/", "gsa/", "; wv)",
    ]

    /// Every token of the three tables, with what it stands for: one scan finds them all.
    static let table = Table(previewTokens.map { ($0, Kind.preview) } + botTokens.map { ($0, Kind.bot) } + inAppBrowserTokens.map { ($0, Kind.inApp) })

    /// Whether the `User-Agent` names an in-app browser (`inAppBrowserTokens`). Asked of a
    /// person's browser only: a crawler or a bot that also names an app is what it says first.
    public static func isInAppBrowser(userAgent bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        classify(userAgent: bytes).inApp
    }

    public static func isInAppBrowser(userAgent: String?) -> Bool {
        guard var userAgent else { return false }
        return userAgent.withUTF8 { isInAppBrowser(userAgent: $0) }
    }

    /// The tokens by the pair of letters each starts with, and a bit per pair that starts
    /// one: a scan looks a byte pair up in the bits (one load) and compares tokens only
    /// where a pair starts one. Built once.
    struct Table: Sendable {
        private var starts = [UInt64](repeating: 0, count: 65_536 / 64)
        private var tokens: [UInt16: [(bytes: [UInt8], kind: UInt8)]] = [:]

        init(_ entries: [(String, UInt8)]) {
            for (token, kind) in entries {
                let bytes = Array(token.utf8)
                precondition(bytes.count >= 2 && bytes.allSatisfy { $0 == Table.folded($0) }, "a token is lowercase, two bytes or more")
                let pair = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
                starts[Int(pair) >> 6] |= 1 << (UInt64(pair) & 63)
                tokens[pair, default: []].append((bytes, kind))
            }
        }

        @inline(__always) static func folded(_ byte: UInt8) -> UInt8 { byte &- 0x41 < 26 ? byte | 0x20 : byte }

        /// The kinds of the tokens that stand in `bytes`, OR-ed; a preview crawler's decides
        /// the rest, so the scan stops at one.
        /// - Complexity: O(bytes); a comparison per token starting with a pair found, of a kind not found yet.
        func kinds(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt8 {
            guard bytes.count >= 2 else { return 0 }
            var found: UInt8 = 0
            var next = Self.folded(bytes[0])
            for start in 0..<(bytes.count - 1) {
                let first = next
                next = Self.folded(bytes[start + 1])
                let pair = UInt16(first) << 8 | UInt16(next)
                guard starts[Int(pair) >> 6] & (1 << (UInt64(pair) & 63)) != 0 else { continue }
                for (token, kind) in tokens[pair]! where found & kind == 0 && Self.stands(token, in: bytes, at: start) {
                    found |= kind
                    if kind == Kind.preview { return found }
                }
            }
            return found
        }

        static func stands(_ token: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> Bool {
            guard bytes.count - start >= token.count else { return false }
            for index in 2..<token.count where folded(bytes[start + index]) != token[index] { return false }
            return true
        }
    }
}

/// Who a landing answers, as its kept answers are told apart: the platform whose store and
/// newest build it uses, and what kind of agent asked.
public struct LandingVisitor: Hashable, Sendable {
    public var platform: Visitor
    public var agent: Agent
    /// A person in an in-app browser (`Agent.isInAppBrowser`).
    public var inApp: Bool

    public init(platform: Visitor, agent: Agent, inApp: Bool = false) {
        (self.platform, self.agent, self.inApp) = (platform, agent, inApp)
    }

    /// A small number unique to each visitor, for hashing.
    public var code: UInt64 { (inApp ? 16 : 0) | UInt64(agent.rawValue) << 2 | (platform == .ios ? 1 : platform == .android ? 2 : 3) }
}
