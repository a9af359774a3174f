import Foundation
import HTTPCore
import LinkLanding
import Telemetry
import Testing
@testable import WaymarkAPI

/// A shard's kept landing answers (`LandingCache.Answers`): open addressing on the key's
/// own hash. Every key put in is found with its own answer while the table grows from 64
/// slots past a few thousand keys; a key that differs in any part (host bytes, case
/// included; target; visitor) is not found; a key put in again replaces its answer; and
/// emptied, it finds nothing.
@Suite("Kept landing answers")
struct LandingAnswersTests {
    static func answer(_ marker: Int) -> LandingCache.Answer {
        LandingCache.Answer(response: HTTPResponse(status: .found, headers: HTTPHeaders([("Location", "https://example.com/\(marker)")])),
                            tally: LandingTally(key: .init(platform: .ios, appVersion: nil, revision: 1, outcome: .proceed, reason: .none)),
                            validUntil: .distantFuture)
    }

    static func find(_ answers: LandingCache.Answers, _ host: String, _ target: String, _ visitor: LandingVisitor) -> LandingCache.Answer? {
        var host = host
        return host.withUTF8 { answers.find(hash: LandingCache.AnswerKey.hash(host: $0, target: target, visitor: visitor), host: $0, target: target, visitor: visitor) }
    }

    /// Every platform with every kind of agent: a crawler's card is never a person's answer.
    static let visitors = Visitor.allCases.flatMap { platform in Agent.allCases.map { LandingVisitor(platform: platform, agent: $0) } }

    @Test func everyKeyIsFoundWithItsOwnAnswer() {
        var answers = LandingCache.Answers()
        var kept: [(key: LandingCache.AnswerKey, answer: LandingCache.Answer)] = []
        for index in 0..<3_000 {
            let key = LandingCache.AnswerKey(host: index % 2 == 0 ? "storefront.example" : "links.example:443",
                                             target: "/product/\(index)\(String(repeating: "x", count: index % 40))",
                                             visitor: Self.visitors[index % Self.visitors.count])
            let answer = Self.answer(index)
            answers.insert(answer, for: key)
            kept.append((key, answer))
        }
        #expect(answers.count == 3_000)
        for (key, answer) in kept {
            #expect(Self.find(answers, key.host, key.target, key.visitor) === answer, "\(key.host)\(key.target)")
            #expect(Self.find(answers, key.host.uppercased(), key.target, key.visitor) == nil)
            #expect(Self.find(answers, key.host, key.target + "?", key.visitor) == nil)
            for other in Self.visitors where other != key.visitor {
                #expect(Self.find(answers, key.host, key.target, other) == nil)
            }
        }
        let replacement = Self.answer(-1)
        answers.insert(replacement, for: kept[7].key)
        #expect(answers.count == 3_000)
        #expect(Self.find(answers, kept[7].key.host, kept[7].key.target, kept[7].key.visitor) === replacement)
        answers.removeAll()
        #expect(answers.count == 0)
        #expect(kept.allSatisfy { Self.find(answers, $0.key.host, $0.key.target, $0.key.visitor) == nil })
    }
}
