import Foundation
import RouteEngine
import LibraryTestSupport
import Testing
@testable import WaymarkClient

/// A link waiting at the login screen survives a kill: stashed on disk while it waits,
/// carried out after the next `ready()` if recent, removed as soon as it ends.
@Suite("Gate stash")
struct GateStashTests {
    typealias LoginScreen = DispatcherPromptTests.LoginScreen

    static func dispatcher(_ directory: URL, session: DispatcherTests.Preconditions, log: ResultLog) -> (RouteDispatcher, LoginScreen) {
        let login = LoginScreen(session)
        var configuration = DispatcherConfiguration()
        configuration.gateTimeout = nil
        configuration.gateStash = GateStash(directory: directory)
        let navigator = RecordingNavigator(NavigationState(selectedTab: "main", stacks: ["main": [Screen("root")]]))
        return (RouteDispatcher(tables: FixedRouteTable(DispatcherTests.table), navigator: navigator, context: session, gates: login,
                                observer: log, configuration: configuration), login)
    }

    @Test("Killed at the login screen: the next launch resumes the link once it is ready, and logged in it proceeds")
    func survivesKill() async throws {
        let directory = temporaryDirectory()
        let stash = GateStash(directory: directory)
        do {
            let (first, login) = Self.dispatcher(directory, session: DispatcherTests.Preconditions(), log: ResultLog())
            await first.ready()
            _ = Task { await first.dispatch(.link("lab://vault/1", door: .scheme)) }
            #expect(await eventually { await login.isShowing })
            #expect(FileManager.default.fileExists(atPath: stash.file.path), "kept while it waits")
        }  // the app is killed here: the dispatcher and its login screen are gone
        let log = ResultLog()
        let (second, _) = Self.dispatcher(directory, session: DispatcherTests.Preconditions(["auth", "adult"]), log: log)
        await second.ready()
        #expect(await eventually { await log.results.count == 1 })
        let resumed = try #require(await log.results.first)
        #expect(resumed.intent == .link("lab://vault/1", door: .scheme) && resumed.outcome.name == "navigated")
        #expect(!FileManager.default.fileExists(atPath: stash.file.path), "gone once it ended")
    }

    @Test("An intent that ends at its gate (the user cancels) takes its stash with it")
    func clearedWhenEnded() async {
        let directory = temporaryDirectory()
        let (dispatcher, login) = Self.dispatcher(directory, session: DispatcherTests.Preconditions(), log: ResultLog())
        await dispatcher.ready()
        let tap = Task { await dispatcher.dispatch(.link("lab://vault/1", door: .scheme)) }
        #expect(await eventually { await login.isShowing })
        #expect(await dispatcher.cancel())
        #expect(await tap.value.outcome == .cancelled)
        #expect(!FileManager.default.fileExists(atPath: GateStash(directory: directory).file.path))
    }

    /// (label, the stash file's text, seconds since it was kept) → nothing resumed, the file gone.
    static let notResumed: [(String, String, Int)] = [
        ("older than its lifetime", #"{"format":"waymark-gate-stash/1","link":"lab://vault/1","door":"scheme","time":TIME}"#, 601),
        ("from the future", #"{"format":"waymark-gate-stash/1","link":"lab://vault/1","door":"scheme","time":TIME}"#, -3_600),
        ("another format", #"{"format":"waymark-gate-stash/2","link":"lab://vault/1","door":"scheme","time":TIME}"#, 0),
        ("an in-app door", #"{"format":"waymark-gate-stash/1","link":"lab://vault/1","door":"inApp","time":TIME}"#, 0),
        ("no link", #"{"format":"waymark-gate-stash/1","door":"scheme","time":TIME}"#, 0),
        ("cut short by a kill", #"{"format":"waymark-gate-stash/1","link":"lab://va"#, 0),
    ]

    @Test(arguments: notResumed)
    func dropped(_ label: String, _ text: String, _ age: Int) {
        let stash = GateStash(directory: temporaryDirectory())
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        #expect(FileManager.default.createFile(atPath: stash.file.path, contents: Data(text.replacingOccurrences(of: "TIME", with: String(1_795_000_000 - age)).utf8)))
        #expect(stash.take(now: now) == nil, "\(label)")
        #expect(!FileManager.default.fileExists(atPath: stash.file.path), "\(label)")
    }

    @Test("Within its lifetime it is taken once")
    func takenOnce() {
        let stash = GateStash(directory: temporaryDirectory())
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        stash.keep("lab://vault/1", door: .universalLink, at: now.addingTimeInterval(-599))
        #expect(stash.take(now: now) == .link("lab://vault/1", door: .universalLink))
        #expect(stash.take(now: now) == nil)
    }
}
