import Foundation
import RouteEngine
import LibraryTestSupport
import Testing
@testable import WaymarkClient

/// The dispatcher's shared table, `conformance/dispatcher.json` (`waymark.dispatcher/1`,
/// `docs/conformance.md`): scripts of dispatches, prompts, cancels, relaunches and the
/// outcomes they must end in, which the Android library's dispatcher runs too, from the
/// same file. Every wait is on a condition, never on time alone.
@Suite("Dispatcher conformance vectors")
struct DispatcherConformanceTests {
    static let file = Fixtures.json(file: "conformance/dispatcher.json")
    static let build = AppBuild(app: "lab", platform: "android", version: "1.0.0")

    struct Row: Sendable, CustomTestStringConvertible {
        let json: JSONValue
        var testDescription: String { json["label"]?.stringValue ?? "?" }
    }

    static let rows = (file["rows"]?.arrayValue ?? []).map(Row.init)
    static let text = try! String(contentsOfFile: Fixtures.path("conformance/dispatcher.json"), encoding: .utf8)

    @Test("Every row of the file runs")
    func everyRow() {
        #expect(Self.rows.count == Self.text.components(separatedBy: "\"label\"").count - 1)
        #expect(Self.rows.count >= 19)
    }

    static func table(revision: Int, extra: [JSONValue] = []) -> RouteTable {
        let routes = Fixtures.labRoutesJSON["routes"]!.arrayValue! + extra
        let bytes = Fixtures.manifestJSON(schema: Fixtures.labSchemaJSON, routes: routes, revision: revision).serializedBytes()
        guard case .success(let manifest) = Manifest.decode(bytes, for: build) else { fatalError("the lab manifest is refused") }
        return RouteTable(manifest: manifest, origin: .bundled)
    }

    /// The lab table, and a refresh in flight from the start that brings a newer one (`newerTable`).
    final class Tables: RouteTableSource, @unchecked Sendable {
        private let lock = NSLock()
        private var table = DispatcherConformanceTests.table(revision: 1)
        private var refresh: Task<Void, Never>?

        init(newer: JSONValue?) {
            guard let newer else { return }
            let delay = Self.seconds(newer["afterSeconds"]) ?? 0
            let extra = newer["routes"]?.arrayValue ?? []
            refresh = Task {
                await Sleep.seconds(delay)
                let next = DispatcherConformanceTests.table(revision: 2, extra: extra)
                self.lock.withLock { self.table = next }
            }
        }

        static func seconds(_ json: JSONValue?) -> Double? {
            switch json {
            case .int(let value)?: Double(value)
            case .double(let value)?: value
            default: nil
            }
        }

        func currentTable() async -> RouteTable { lock.withLock { table } }

        func newerTable(than revision: Int, within seconds: TimeInterval) async -> RouteTable? {
            let now = await currentTable()
            if now.revision > revision { return now }
            guard let refresh = lock.withLock({ self.refresh }) else { return nil }
            _ = await BoundedWait.value(within: seconds) { await refresh.value }
            let after = await currentTable()
            return after.revision > revision ? after : nil
        }
    }

    /// The app: a session, a login screen that answers `auth` when told (other preconditions
    /// at once), a leave prompt, a navigator that may be stuck, and what each was told.
    actor App: ContextProvider, GateHandler, LeaveHandler, Navigator, DispatchObserver {
        var satisfied: Set<String>
        private(set) var closed: [String] = []
        private(set) var callbacks: [String] = []
        private(set) var observed: [DispatchResult] = []
        private(set) var loginShown = false
        private(set) var saving = false
        private(set) var applyStarted = false
        private(set) var applied = 0
        private var login: CheckedContinuation<Bool, Never>?
        private var stuckApplies: Int
        private var held: [CheckedContinuation<Void, Never>] = []
        private var current: NavigationState
        let leaveBehaviour: String?

        init(satisfied: Set<String>, dirty: Bool, stuck: Bool, leave: String?) {
            self.satisfied = satisfied
            stuckApplies = stuck ? 1 : 0
            leaveBehaviour = leave
            current = NavigationState(selectedTab: "main", stacks: ["main": [Screen("root")] + (dirty ? [Screen("item", params: ["id": .int(1)], isDirty: true)] : [])])
        }

        func context() -> ResolutionContext { ResolutionContext(satisfied: satisfied, now: Fixtures.date("2026-03-15T00:00:00Z")) }

        func satisfy(_ precondition: String, for gate: Gate) async -> Bool {
            guard precondition == "auth" else {
                satisfied.insert(precondition)
                return true
            }
            loginShown = true
            return await withTaskCancellationHandler {
                await withCheckedContinuation { login = $0 }
            } onCancel: {
                Task { await self.answerLogin(false) }
            }
        }

        func logIn() {
            satisfied.insert("auth")
            answerLogin(true)
        }

        private func answerLogin(_ value: Bool) {
            login?.resume(returning: value)
            login = nil
        }

        func close(_ gate: Gate, because ending: PromptEnding) async { closed.append(ending.rawValue) }

        /// Handed an auth callback, the login screen signs in with it.
        func received(callback link: String, for gate: Gate) async {
            callbacks.append(link)
            logIn()
        }

        func decide(leaving dirty: [Screen], for plan: NavigationPlan) async -> LeaveDecision {
            if leaveBehaviour == "savesForever" { return .saveThenContinue }
            try? await Task.sleep(nanoseconds: 3_600_000_000_000)  // never, unless cancelled
            return .discard
        }

        func save(_ dirty: [Screen]) async -> Bool {
            saving = true
            try? await Task.sleep(nanoseconds: 3_600_000_000_000)
            return true
        }

        func close(because ending: PromptEnding) async { closed.append(ending.rawValue) }

        var state: NavigationState { current }

        func apply(_ plan: NavigationPlan) async {
            applyStarted = true
            if stuckApplies > 0 {
                stuckApplies -= 1
                await withCheckedContinuation { held.append($0) }
            }
            current.apply(plan)
            applied += 1
        }

        func release() {
            for continuation in held { continuation.resume() }
            held = []
        }

        func dispatched(_ result: DispatchResult) async { observed.append(result) }

        func isTrue(_ condition: String) -> Bool {
            switch condition {
            case "loginShown": loginShown
            case "saving": saving
            case "applyStarted": applyStarted
            default: false
            }
        }
    }

    static func configuration(_ json: JSONValue?, stash: GateStash?) -> DispatcherConfiguration {
        var configuration = DispatcherConfiguration()
        guard let json else { return configuration }
        func seconds(_ key: String, _ keep: TimeInterval?) -> TimeInterval? {
            guard let value = json[key] else { return keep }
            return Tables.seconds(value)  // null: no limit
        }
        configuration.gateTimeout = seconds("gateTimeout", configuration.gateTimeout)
        configuration.leaveTimeout = seconds("leaveTimeout", configuration.leaveTimeout)
        configuration.applyTimeout = seconds("applyTimeout", configuration.applyTimeout)
        configuration.unknownRouteWait = seconds("unknownRouteWait", configuration.unknownRouteWait)
        if let policy = json["supersede"]?.stringValue { configuration.supersede = SupersedePolicy(rawValue: policy)! }
        if let prompts = json["supersedesPrompts"]?.boolValue { configuration.supersedesPrompts = prompts }
        if json["gateStash"]?.boolValue == true { configuration.gateStash = stash }
        if let prefixes = json["authCallbackPrefixes"]?.arrayValue { configuration.authCallbackPrefixes = prefixes.map { $0.stringValue! } }
        return configuration
    }

    static func intent(_ json: JSONValue) -> Intent {
        if let link = json.stringValue { return .link(link, door: link.hasPrefix("https:") ? .universalLink : .scheme) }
        let params = (json["params"]?.objectValue ?? [:]).mapValues { value -> ParamValue in
            if let int = value.intValue { return .int(int) }
            return .string(value.stringValue!)
        }
        return .request(DestinationRequest(destination: json["destination"]!.stringValue!, params: params))
    }

    @Test(arguments: rows)
    func script(_ row: Row) async throws {
        let json = row.json
        let stash = GateStash(directory: temporaryDirectory())
        let tables = Tables(newer: json["newerTable"])
        func launch(_ satisfied: Set<String>) -> (RouteDispatcher, App) {
            let app = App(satisfied: satisfied, dirty: json["screens"]?.stringValue == "dirty", stuck: json["navigator"]?.stringValue == "stuck",
                          leave: json["leave"]?.stringValue)
            let dispatcher = RouteDispatcher(tables: tables, navigator: app, context: app, gates: app, leave: app, observer: app,
                                             configuration: Self.configuration(json["configuration"], stash: stash))
            return (dispatcher, app)
        }
        var (dispatcher, app) = launch([])
        await dispatcher.ready()
        var running: [String: Task<DispatchResult, Never>] = [:]
        for (index, step) in (json["steps"]?.arrayValue ?? []).enumerated() {
            let at = "step \(index + 1)"
            if let target = step["dispatch"] {
                let intent = Self.intent(target)
                let before = await dispatcher.arrivals
                let current = dispatcher
                running[step["as"]!.stringValue!] = Task { await current.dispatch(intent) }
                // Arrived (in this order) before the next step runs.
                #expect(await eventually { await current.arrivals > before }, "\(at): not dispatched")
            } else if let condition = step["await"]?.stringValue {
                let current = app
                #expect(await eventually { await current.isTrue(condition) }, "\(at): never \(condition)")
            } else if step["logIn"] != nil {
                await app.logIn()
            } else if let expected = step["cancel"]?.boolValue {
                #expect(await dispatcher.cancel() == expected, "\(at): cancel()")
            } else if step["release"] != nil {
                await app.release()
            } else if let name = step["expect"]?.stringValue {
                let outcome: String
                if name == "stashed" {
                    let current = app
                    #expect(await eventually { await current.observed.contains { $0.sequence == 1 } }, "\(at): the stashed link never ran")
                    outcome = await app.observed.first { $0.sequence == 1 }?.outcome.name ?? "none"
                } else {
                    outcome = await running[name]!.value.outcome.name
                }
                #expect(outcome == step["outcome"]?.stringValue, "\(at): \(name)")
            } else if let callbacks = step["callbacks"]?.arrayValue {
                #expect(await app.callbacks == callbacks.map { $0.stringValue! }, "\(at): callbacks")
            } else if let closed = step["closed"]?.arrayValue {
                #expect(await app.closed == closed.map { $0.stringValue! }, "\(at): told to close")
            } else if let count = step["applied"]?.intValue {
                #expect(await app.applied == count, "\(at): applied")
            } else if let count = step["observed"]?.intValue {
                let current = app
                _ = await eventually { await current.observed.count >= count }
                #expect(await app.observed.count == count, "\(at): observed")
            } else if let relaunch = step["relaunch"] {
                // The process dies at the login screen: nothing of it answers again; a new
                // launch (the same files) opens the launch gate.
                let satisfied = Set((relaunch["session"]?.arrayValue ?? []).map { $0.stringValue! })
                (dispatcher, app) = launch(satisfied)
                await dispatcher.ready()
            } else {
                Issue.record("\(at): unknown step \(step)")
            }
        }
    }
}
