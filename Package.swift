// swift-tools-version:6.0
// Waymark: no package dependencies, by design (see ../shared/BRIEF.md).
import Foundation
import PackageDescription

// Two packages in one manifest. The app's half (RouteEngine, WaymarkClient,
// WaymarkObservation, their tests) is declared everywhere; the server, its tools, benchmarks,
// fuzzers and tests only on Linux, where the server runs. So an app that adds this repository
// from Xcode sees the app's libraries alone, not executables and C targets that cannot build
// for iOS. WAYMARK_PACKAGE=client declares the app's half alone on Linux too
// (make check-client-package builds a separate app package against it that way).
#if os(Linux)
let withServer = ProcessInfo.processInfo.environment["WAYMARK_PACKAGE"] != "client"
#else
let withServer = false
#endif

let appProducts: [Product] = [
    .library(name: "RouteEngine", targets: ["RouteEngine"]),
    .library(name: "WaymarkClient", targets: ["WaymarkClient"]),
    .library(name: "WaymarkObservation", targets: ["WaymarkObservation"]),
]
let serverProducts: [Product] = [
    .executable(name: "waymark", targets: ["waymark"]),
    .executable(name: "waymark-simulator", targets: ["WaymarkSimulator"]),
]

let appTargets: [Target] = [
    // ── The app's half: the libraries an iOS app embeds (Foundation at most; make check-imports).
    // Pure primitives shared by the pure modules below: calendar arithmetic, RFC 3339
    // timestamps, JSON string escaping, zero padding (one copy of each).
    .target(name: "CivilDate"),
    // Pure: Foundation at most, no I/O, so an iOS app can embed it.
    .target(name: "RouteEngine", dependencies: ["CivilDate"]),
    // The app's half: manifest client, dispatcher with its gates, navigation planner,
    // telemetry reporter. Foundation only (FoundationNetworking on Linux), like RouteEngine.
    // PrivacyInfo.xcprivacy: what the telemetry collects and why, for the App Store.
    .target(name: "WaymarkClient", dependencies: ["RouteEngine"], resources: [.copy("PrivacyInfo.xcprivacy")]),
    // The navigation model a SwiftUI app binds to (Observation; iOS 17 and later).
    .target(name: "WaymarkObservation", dependencies: ["WaymarkClient", "RouteEngine"]),

    // What the app's libraries' tests need (fixtures, a seeded generator): RouteEngine and
    // Foundation only, so those tests build wherever the libraries do, macOS included.
    .target(name: "LibraryTestSupport", dependencies: ["RouteEngine", "CivilDate"], path: "Tests/LibraryTestSupport"),
    // The client's loop against a live daemon (ClientLoopTests, HostileServerTests, under
    // WAYMARK_SERVER) runs where the server is declared; everything else here builds anywhere.
    .testTarget(name: "WaymarkClientTests",
                dependencies: ["WaymarkClient", "WaymarkObservation", "RouteEngine", "LibraryTestSupport"]
                    + (withServer ? ["ManifestStore", "TestSupport"] : []),
                swiftSettings: withServer ? [.define("WAYMARK_SERVER")] : []),
    .testTarget(name: "RouteEngineTests", dependencies: ["RouteEngine", "LibraryTestSupport", "CivilDate"]),
]

let serverTargets: [Target] = [
    // ── The server: `waymark serve` and its CLI (Linux).
    // Pure HTTP/1.1: parsing, framing, serializing. No Glibc, no Dispatch.
    .target(name: "HTTPCore", dependencies: ["CivilDate"]),
    // The one syscall wrapper and typed I/O error, files and the durable data directory.
    .target(name: "SystemIO", dependencies: ["CSystemShim"]),
    // Sockets, epoll event loops, connections, routing.
    .target(name: "CSystemShim"),
    .target(name: "HTTPServer", dependencies: ["HTTPCore", "CivilDate", "CSystemShim", "SystemIO"]),
    // Durable revisions, schemas and the audit log in a data directory.
    .target(name: "ManifestStore", dependencies: ["RouteEngine", "CivilDate", "SystemIO", "Rollout"]),
    // The HTTP API of `waymark serve`: endpoints, tokens and scopes, cached manifests.
    .target(name: "WaymarkAPI", dependencies: ["ManifestStore", "Importing", "Rollout", "Impact", "QRCode", "LinkLanding", "LinkShapes", "Telemetry", "HTTPServer", "HTTPCore", "RouteEngine", "LinkChecks", "Replication", "CivilDate", "SystemIO"],
                resources: [.embedInCode("Resources/dashboard.html"), .embedInCode("Resources/console.html")]),
    // The impact preview's replay: what publishing a draft would do to last week's opens
    // and unknown links (pure: documents and counts in, changes out).
    .target(name: "Impact", dependencies: ["RouteEngine"]),
    // Staged rollouts: the guard that compares a candidate revision's failures with the
    // stable one's (pure: counts in, a verdict out).
    .target(name: "Rollout"),
    // QR codes for links (ISO/IEC 18004, byte mode): our own encoder, SVG and PNG out.
    .target(name: "QRCode"),
    // Unknown links' shapes (RouteEngine's LinkShape) counted in fixed memory (pure).
    .target(name: "LinkShapes"),
    // Where a link opened without the app lands: the visitor's platform from User-Agent,
    // the decision from the engine's resolution and the schema's addresses (pure).
    .target(name: "LinkLanding", dependencies: ["RouteEngine", "HTTPCore"]),
    // Moving in from other link services: their exports read (CSV, bounded; pure).
    .target(name: "Importing", dependencies: ["RouteEngine", "LinkChecks"]),
    // Resolution telemetry: batch parsing, a group-committed log, counts by dimension.
    .target(name: "Telemetry", dependencies: ["CivilDate", "SystemIO", "LinkShapes", "RouteEngine"]),
    // System libcurl (pkg-config libcurl; Debian libcurl4-openssl-dev, which `make` installs).
    .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
    // System libpq (pkg-config libpq; Debian libpq-dev, which `make` installs), for the
    // database store of issue 53 (docs/postgres.md).
    .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
    // One PostgreSQL connection: parameterised statements, LISTEN/NOTIFY, advisory locks.
    .target(name: "PostgresClient", dependencies: ["CLibPQ"]),
    // The database store (issue 53, being built): its tables' versioned migrations and the
    // store's medium on PostgreSQL (DatabaseMedium).
    .target(name: "DatabaseStore", dependencies: ["PostgresClient", "ManifestStore", "RouteEngine", "SystemIO", "CivilDate"]),
    // The one libcurl client: bounded outbound requests, an address judge before connect.
    .target(name: "HTTPClient", dependencies: ["CCurl"]),
    // Outbound checks of fallback URLs and associated-domain files, safe against SSRF.
    .target(name: "LinkChecks", dependencies: ["HTTPClient", "RouteEngine"]),
    // Followers: mirror a primary's revisions, schemas and token hashes; forward counts.
    .target(name: "Replication", dependencies: ["HTTPClient", "ManifestStore", "Telemetry", "RouteEngine"]),
    .target(name: "WaymarkCLI", dependencies: ["RouteEngine", "Importing", "ManifestStore", "DatabaseStore", "WaymarkAPI", "Rollout", "Telemetry", "HTTPServer", "LinkChecks", "Replication", "CivilDate", "SystemIO"]),
    .executableTarget(name: "waymark", dependencies: ["WaymarkCLI"]),

    // ── Tools (Tools/): the simulator, the HTTP fixture server the benchmarks and tests use.
    // An app played against a live server: the WaymarkClient loop, headless (docs/client.md).
    .executableTarget(name: "WaymarkSimulator", dependencies: ["WaymarkClient", "RouteEngine"], path: "Tools/WaymarkSimulator"),
    .executableTarget(name: "HTTPFixtureServer", dependencies: ["HTTPServer", "HTTPCore"], path: "Tools/HTTPFixtureServer"),

    // ── Benchmarks (Benchmarks/): each prints its figures beside a peer (docs/performance.md).
    // The benchmarks' generated app: a schema, 10,000 routes and links of realistic shape.
    .target(name: "BenchSupport", dependencies: ["RouteEngine", "CivilDate"], path: "Benchmarks/BenchSupport"),
    .executableTarget(name: "RouteEngineBench", dependencies: ["RouteEngine", "CivilDate", "BenchSupport"], path: "Benchmarks/RouteEngineBench"),
    // make bench-client: the app's half on a 10,000-route manifest.
    .executableTarget(name: "ClientBench", dependencies: ["WaymarkClient", "RouteEngine", "BenchSupport", "CSystemShim"], path: "Benchmarks/ClientBench"),
    // make bench-telemetry: batch generation and the JSONDecoder comparison.
    .executableTarget(name: "TelemetryBench", dependencies: ["Telemetry", "CivilDate"], path: "Benchmarks/TelemetryBench"),
    // make bench-guard: the rollout guard on simulated fleets.
    .executableTarget(name: "GuardBench", dependencies: ["Rollout"], path: "Benchmarks/GuardBench"),
    // epoll against Dispatch read sources, the same echo over socket pairs (make bench-events).
    .executableTarget(name: "EventDeliveryBench", dependencies: ["CSystemShim"], path: "Benchmarks/EventDeliveryBench"),

    // ── Fuzzers (Fuzz/): libFuzzer targets (make fuzz); an ordinary build replays inputs given as files.
    .executableTarget(name: "HTTPFuzz", dependencies: ["HTTPCore"], path: "Fuzz/HTTPFuzz"),
    .executableTarget(name: "TelemetryFuzz", dependencies: ["Telemetry"], path: "Fuzz/TelemetryFuzz"),

    // ── Tests.
    // The server's test fixtures (live daemons, loopback clients); Linux only, as the server.
    .target(name: "TestSupport", dependencies: ["LibraryTestSupport", "RouteEngine", "ManifestStore", "WaymarkAPI", "Telemetry", "HTTPServer", "HTTPCore", "LinkChecks", "Replication", "CivilDate"], path: "Tests/TestSupport"),
    .testTarget(name: "ImpactTests", dependencies: ["Impact", "RouteEngine", "LibraryTestSupport", "CivilDate"]),
    .testTarget(name: "RolloutTests", dependencies: ["Rollout", "TestSupport"]),
    .testTarget(name: "QRCodeTests", dependencies: ["QRCode"]),
    .testTarget(name: "LinkShapesTests", dependencies: ["LinkShapes", "RouteEngine", "TestSupport"]),
    .testTarget(name: "LinkLandingTests", dependencies: ["LinkLanding", "RouteEngine", "TestSupport"]),
    // Against a PostgreSQL of the tests' own (make test-postgres); skipped without one.
    .testTarget(name: "PostgresClientTests", dependencies: ["PostgresClient", "DatabaseStore", "ManifestStore", "Rollout", "RouteEngine", "TestSupport", "SystemIO"]),
    .testTarget(name: "ImportingTests", dependencies: ["Importing", "RouteEngine", "LibraryTestSupport"]),
    // WaymarkClient: `generate swift`'s test compiles the generated file against it.
    .testTarget(name: "WaymarkCLITests", dependencies: ["WaymarkCLI", "ManifestStore", "RouteEngine", "TestSupport", "WaymarkClient"]),
    .testTarget(name: "HTTPCoreTests", dependencies: ["HTTPCore"]),
    .testTarget(name: "TelemetryTests", dependencies: ["Telemetry", "SystemIO", "TestSupport", "CivilDate"]),
    .testTarget(name: "WaymarkAPITests", dependencies: ["WaymarkAPI", "ManifestStore", "Telemetry", "HTTPServer", "HTTPCore", "RouteEngine", "LinkChecks", "Replication", "SystemIO", "TestSupport", "CivilDate", "Importing"]),
    .testTarget(name: "ManifestStoreTests", dependencies: ["ManifestStore", "RouteEngine", "Rollout", "TestSupport"]),
    .testTarget(name: "LinkChecksTests", dependencies: ["LinkChecks", "RouteEngine", "TestSupport"]),
    .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "HTTPCore", "SystemIO", "TestSupport"]),
]

let package = Package(
    name: "Waymark",
    // The server runs on Linux; the libraries an app embeds build for these too.
    platforms: [.iOS(.v16), .macOS(.v13)],
    products: appProducts + (withServer ? serverProducts : []),
    targets: appTargets + (withServer ? serverTargets : []),
    swiftLanguageModes: [.v6]
)
