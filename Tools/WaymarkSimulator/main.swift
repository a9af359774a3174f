// waymark-simulator: an app played against a live Waymark server, headless — the
// WaymarkClient loop with an in-memory navigator and a scripted login. Links in; gates,
// plans, results and telemetry out.
//
//   waymark-simulator --server http://127.0.0.1:8080 --token wm_… [--telemetry-token wm_…]
//       [--app storefront] [--platform ios] [--version 5.3.0] [--logged-in]
//       [--login succeed|cancel|early] [--dirty DESTINATION] [--cache DIR] [LINK…]
//
// A LINK is `https://…` (universal link), `scheme://…` (custom scheme), `push:URL` (a push
// payload carrying URL under "deeplink") or `app:destination?name=value&…` (an in-app
// request; numbers are ints). Without LINKs they are read from standard input, one a line.
// The app starts on its home tab; `--dirty home` marks that screen as holding unsaved work
// (the leave handler answers "discard" and says so).
import Foundation
import RouteEngine
import WaymarkClient

let usage = """
    Usage: waymark-simulator --server URL --token TOKEN [--telemetry-token TOKEN]
               [--app storefront] [--platform ios] [--version 5.3.0] [--logged-in]
               [--login succeed|cancel|early] [--dirty DESTINATION] [--cache DIR] [LINK...]

    Plays an app against a live Waymark server, headless: the WaymarkClient loop with an
    in-memory navigator and a scripted login. Prints each link's gates, plan and result.

      --token TOKEN            a manifest:read token (the app's)
      --telemetry-token TOKEN  a telemetry:write token: the results are posted as telemetry
      --logged-in              the session satisfies auth from the start
      --login MODE             the login screen succeeds, is cancelled, or answers early
      --dirty DESTINATION      that screen holds unsaved work (the leave handler discards it)
      --cache DIR              the client's cache directory (default: a fresh temporary one)

    A LINK is https://... (universal link), scheme://... (custom scheme), push:URL (a push
    payload carrying URL under "deeplink") or app:destination?name=value&... (an in-app
    request). Without LINKs they are read from standard input, one a line.
    """

struct Options {
    var server: URL?
    var token: String?
    var telemetryToken: String?
    var build = AppBuild(app: "storefront", platform: "ios", version: "5.3.0")
    var loggedIn = false
    var login = "succeed"
    var dirty: [String] = []
    var cache: URL?
    var links: [String] = []
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("waymark-simulator: \(message)\n".utf8))
    exit(64)
}

func parse(_ arguments: [String]) -> Options {
    var options = Options()
    var index = 0
    func value() -> String {
        index += 1
        guard index < arguments.count else { fail("\(arguments[index - 1]) needs a value") }
        return arguments[index]
    }
    while index < arguments.count {
        switch arguments[index] {
        case "--server": options.server = URL(string: value())
        case "--token": options.token = value()
        case "--telemetry-token": options.telemetryToken = value()
        case "--app": options.build.app = value()
        case "--platform": options.build.platform = value()
        case "--version": options.build.version = value()
        case "--logged-in": options.loggedIn = true
        case "--login":
            options.login = value()
            guard ["succeed", "cancel", "early"].contains(options.login) else { fail("--login is succeed, cancel or early") }
        case "--dirty": options.dirty.append(value())
        case "--cache": options.cache = URL(fileURLWithPath: value())
        case "--help", "-h":
            print(usage)
            exit(0)
        case let argument where argument.hasPrefix("--"): fail("unknown option \(argument) (--help lists them)")
        case let link: options.links.append(link)
        }
        index += 1
    }
    guard options.server != nil else { fail("--server is required") }
    return options
}

/// What the app's session knows; the scripted login changes it.
actor Session: ContextProvider {
    var loggedIn: Bool
    init(loggedIn: Bool) { self.loggedIn = loggedIn }
    func context() -> ResolutionContext { ResolutionContext(satisfied: loggedIn ? ["auth"] : [], now: Date()) }
    func logIn() { loggedIn = true }
}

/// A login screen that succeeds (committing first), is cancelled, or answers before it
/// commits (`early`: the dispatcher's gate-loop guard ends it).
struct ScriptedLogin: GateHandler {
    let session: Session
    let behaviour: String

    func satisfy(_ precondition: String, for gate: Gate) async -> Bool {
        print("  gate: \(precondition) for \(gate.destination) — login (\(behaviour))")
        switch behaviour {
        case "succeed":
            await session.logIn()
            return true
        case "early": return true
        default: return false
        }
    }
}

struct Discard: LeaveHandler {
    func decide(leaving dirty: [Screen], for plan: NavigationPlan) async -> LeaveDecision {
        print("  leave: \(dirty.map(\.description).joined(separator: ", ")) has unsaved work — discard")
        return .discard
    }

    func save(_ dirty: [Screen]) async -> Bool { true }
}

func intent(_ text: String) -> Intent? {
    if text.hasPrefix("push:") { return Intent.push(["deeplink": String(text.dropFirst(5))], keys: ["deeplink"]) }
    if text.hasPrefix("app:") {
        guard let components = URLComponents(string: "app://x/" + text.dropFirst(4)) else { return nil }
        var params: [String: ParamValue] = [:]
        for item in components.queryItems ?? [] {
            params[item.name] = Int(item.value ?? "").map(ParamValue.int) ?? .string(item.value ?? "")
        }
        return .request(DestinationRequest(destination: String(components.path.dropFirst()), params: params))
    }
    return .link(text, door: text.lowercased().hasPrefix("https:") ? .universalLink : .scheme)
}

let options = parse(Array(CommandLine.arguments.dropFirst()))
// Without --cache, a scratch directory of this run's, removed at the end: every run starts as a fresh install.
let scratch = options.cache == nil
let cache = options.cache ?? URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("waymark-simulator-\(UUID().uuidString)")
defer { if scratch { try? FileManager.default.removeItem(at: cache) } }
let manifests = ManifestClient(configuration: ManifestClientConfiguration(server: options.server!, build: options.build,
                                                                         token: options.token, cacheDirectory: cache))
let outcome = await manifests.refresh()
let table = await manifests.currentTable()
print("manifest: \(outcome) — revision \(table.revision) from \(table.origin.rawValue), \(table.manifest?.resolver.routeIDs.count ?? 0) routes")
for problem in table.manifest?.leftOut ?? [] { print("  left out: \(problem.path) \(problem.message)") }

var reporter: TelemetryReporter?
if let token = options.telemetryToken {
    reporter = TelemetryReporter(configuration: TelemetryConfiguration(server: options.server!, build: options.build, token: token,
                                                                       cacheDirectory: cache))
}
let session = Session(loggedIn: options.loggedIn)
let navigator = RecordingNavigator(NavigationState(selectedTab: "home", stacks: ["home": [Screen("home")]]))
for destination in options.dirty { await navigator.setDirty(destination) }
let dispatcher = RouteDispatcher(tables: manifests, navigator: navigator, context: session,
                                 gates: ScriptedLogin(session: session, behaviour: options.login), leave: Discard(), observer: reporter)
await dispatcher.ready()

var links = options.links
if links.isEmpty {
    while let line = readLine() {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty { links.append(trimmed) }
    }
}
for text in links {
    print("→ \(text)")
    guard let intent = intent(text) else {
        print("  not a link or request")
        continue
    }
    let result = await dispatcher.dispatch(intent)
    if case .navigated(let plan) = result.outcome {
        print("  plan: " + (plan.operations.isEmpty ? "nothing to do" : plan.operations.map(\.description).joined(separator: "; ")))
    }
    if case .notFound(let notFound) = result.outcome, let detail = notFound.detail { print("  detail: \(detail)") }
    print("  result: \(result.outcome.name) [\(intent.door.rawValue), revision \(result.revision)]")
}
let state = await navigator.current
print("shown: tab \(state.selectedTab ?? "-"); " + state.stacks.keys.sorted().map { tab in
    "\(tab): " + state.stacks[tab]!.map(\.description).joined(separator: " > ")
}.joined(separator: " | ") + (state.modals.isEmpty ? "" : " | modals: " + state.modals.map(\.description).joined(separator: ", ")))
if let reporter {
    let pending = await reporter.pendingResolutions
    let posted = await reporter.flushAll()
    print("telemetry: \(pending) resolutions; \(posted)")
}
