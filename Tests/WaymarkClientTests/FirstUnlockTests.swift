import Foundation
import RouteEngine
import LibraryTestSupport
import Testing
@testable import WaymarkClient

/// Files that are there but cannot be read now — before the device's first unlock, when
/// data protection keeps them shut (here: a directory where the file should be, which no
/// read opens whoever runs the test). None is taken for an empty file, none written over.
@Suite("Files that cannot be read yet")
struct FirstUnlockTests {
    static let build = Fixtures.storefrontBuild

    /// Shuts `file`: a directory where it is, which no read opens. Returns what it held.
    @discardableResult
    static func shut(_ file: URL) throws -> Data {
        let saved = try Data(contentsOf: file)
        try FileManager.default.removeItem(at: file)
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
        return saved
    }

    /// One minute for every event of the suite (taken once: events made either side of a
    /// minute's end would not add up into one).
    static let minute = Int(Date().timeIntervalSince1970) / 60 * 60

    /// One proceed event for `route`, this minute.
    static func event(_ route: String) -> TelemetryEvent {
        TelemetryEvent(client: .init(platform: "ios", appVersion: "5.3.0", revision: 1), minute: minute, entry: .universalLink,
                       outcome: "proceed", reason: nil, route: route, destination: route, precondition: nil)
    }

    /// The device is unlocked: `file` holds `data` again.
    static func unlock(_ file: URL, _ data: Data) throws {
        try FileManager.default.removeItem(at: file)
        try data.write(to: file)
    }

    @Test("The manifest cache: the bundled table meanwhile, the cache once it reads")
    func manifestCache() async throws {
        let directory = temporaryDirectory()
        let bundled = directory.appendingPathComponent("bundled.json")
        try Data(Fixtures.storefrontManifest(revision: 1)).write(to: bundled)
        var configuration = ManifestClientConfiguration(server: URL(string: "https://links.example")!, build: Self.build, token: "wm_t",
                                                        cacheDirectory: directory, bundledManifest: bundled)
        configuration.cohort = .none
        // A cache of revision 3, from an earlier run.
        let cacheFile = await ManifestClient(configuration: configuration).cacheFile
        try CacheEntry(etag: "\"m3\"", manifest: Data(Fixtures.storefrontManifest(revision: 3))).data.write(to: cacheFile)
        let saved = try Self.shut(cacheFile)
        let client = ManifestClient(configuration: configuration, transport: ScriptedTransport([]))
        await client.setUnreadableRetry(0)
        let early = await client.currentTable()
        #expect(early.origin == .bundled && early.revision == 1, "the bundled table while the cache is shut")
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: cacheFile.path, isDirectory: &isDirectory) && isDirectory.boolValue, "nothing written over it")
        // Shut, a refresh does not ask: an answer compared with the stand-in could replace the
        // newer cached revision for the run, and write over the cache.
        #expect(await client.refresh().isFailure)
        #expect(await (client.transport as! ScriptedTransport).requests.isEmpty)
        // Unlocked: the next look reads the cache.
        try Self.unlock(cacheFile, saved)
        let later = await client.currentTable()
        #expect(later.origin == .cache && later.revision == 3)
    }

    @Test("The install id: none while it is shut, never a new one over it")
    func installID() async throws {
        let directory = temporaryDirectory()
        let id = try #require(Cohort.installID(in: directory))
        let file = directory.appendingPathComponent("install-id")
        let saved = try Self.shut(file)
        #expect(Cohort.installID(in: directory) == nil)
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: file.path, isDirectory: &isDirectory) && isDirectory.boolValue, "not replaced")
        try Self.unlock(file, saved)
        #expect(Cohort.installID(in: directory) == id, "the install keeps its id, so its cohort")
    }

    @Test("The telemetry journal: what is recorded meanwhile stays in memory, nothing is posted or written over, then both go")
    func journal() async throws {
        let directory = temporaryDirectory()
        let accepted = Result<TransportResponse, URLError>.success(TransportResponse(status: 202, body: Data(#"{"accepted":2,"rejected":[]}"#.utf8)))
        let configuration = TelemetryConfiguration(server: URL(string: "https://links.example")!, build: Self.build, token: "wm_w", cacheDirectory: directory)
        // An earlier run left one event in the journal.
        let earlier = TelemetryReporter(configuration: configuration, transport: ScriptedTransport([]))
        await earlier.record(Self.event("cart"), count: 1)
        let journal = await earlier.journalFile
        let written = try Self.shut(journal)

        let transport = ScriptedTransport([accepted])
        let reporter = TelemetryReporter(configuration: configuration, transport: transport)
        await reporter.setDirectoryIsOpen { _ in false }  // the device is still locked
        await reporter.record(Self.event("product"), count: 1)
        #expect(await reporter.flush() == .retryLater(status: nil, retryAfter: nil), "nothing posted before the journal reads")
        #expect(await transport.requests.isEmpty)
        try Self.unlock(journal, written)
        // Unlocked: the next call reads it, and both events go, in one batch.
        guard case .delivered(_, let resolutions, _) = await reporter.flush() else { Issue.record("not delivered"); return }
        #expect(resolutions == 2)
        let body = try #require(await transport.requests.first?.body)
        let routes = try JSONParser().parse(body)["events"]!.arrayValue!.compactMap { $0["route"]?.stringValue }
        #expect(routes == ["cart", "product"], "the journal's older event first")
    }

    @Test("Before the first unlock, what is recorded outlives the process: a side journal without protection, joined once the journal reads, counted once")
    func lockedRunsKeepTheirEvents() async throws {
        let directory = temporaryDirectory()
        let configuration = TelemetryConfiguration(server: URL(string: "https://links.example")!, build: Self.build, token: "wm_w", cacheDirectory: directory)
        let earlier = TelemetryReporter(configuration: configuration, transport: ScriptedTransport([]))
        await earlier.record(Self.event("cart"), count: 1)
        let journal = await earlier.journalFile
        let side = await earlier.sideJournalFile
        let written = try Self.shut(journal)

        // A background launch before the first unlock records two, and iOS ends it.
        let locked = TelemetryReporter(configuration: configuration, transport: ScriptedTransport([]))
        await locked.setDirectoryIsOpen { _ in false }
        await locked.record(Self.event("product"), count: 1)
        await locked.record(Self.event("product"), count: 1)
        #expect(FileManager.default.fileExists(atPath: side.path), "kept on disk, not in memory alone")
        // A second one, still locked, records one more: the first one's two are read, not lost.
        let again = TelemetryReporter(configuration: configuration, transport: ScriptedTransport([]))
        await again.setDirectoryIsOpen { _ in false }
        await again.record(Self.event("orders"), count: 1)
        #expect(await again.pendingResolutions == 3)

        // Then the user unlocks, and the app's next run posts everything once.
        try Self.unlock(journal, written)
        let accepted = Result<TransportResponse, URLError>.success(TransportResponse(status: 202, body: Data(#"{"accepted":3,"rejected":[]}"#.utf8)))
        let transport = ScriptedTransport([accepted])
        let unlocked = TelemetryReporter(configuration: configuration, transport: transport)
        guard case .delivered(_, let resolutions, _) = await unlocked.flush() else { Issue.record("not delivered"); return }
        #expect(resolutions == 4, "cart, product twice, orders: each once")
        let body = try #require(await transport.requests.first?.body)
        let counts = try JSONParser().parse(body)["events"]!.arrayValue!.map { "\($0["route"]!.stringValue!)×\($0["count"]!.intValue!)" }
        #expect(counts == ["cart×1", "product×2", "orders×1"], "the journal's older event first")
        #expect(!FileManager.default.fileExists(atPath: side.path), "joined to the journal, then removed")
        #expect(await TelemetryReporter(configuration: configuration, transport: ScriptedTransport([])).pendingResolutions == 0, "nothing left to count twice")
    }

    @Test("The side journal keeps no shape, survives a torn last line, and covers a journal not made yet; off, nothing is written unprotected")
    func sideJournalEdges() async throws {
        let directory = temporaryDirectory()
        var unknown = TelemetryEvent(client: .init(platform: "ios", appVersion: "5.3.0", revision: 1), minute: Self.minute, entry: .universalLink,
                                     outcome: "notFound", reason: .unknownRoute, route: nil, destination: nil, precondition: nil)
        unknown.shape = "/u/:param/orders"
        let known = Self.event("cart")
        let configuration = TelemetryConfiguration(server: URL(string: "https://links.example")!, build: Self.build, token: "wm_w", cacheDirectory: directory)
        // No journal yet, and the directory shut (a first background launch after a reboot).
        let first = TelemetryReporter(configuration: configuration, transport: ScriptedTransport([]))
        await first.setDirectoryIsOpen { _ in false }
        await first.record(unknown, count: 1)
        let side = await first.sideJournalFile
        let text = try String(contentsOf: side, encoding: .utf8)
        #expect(text.contains("unknownRoute") && !text.contains("shape") && !text.contains("orders"), "counted, without its shape: \(text)")
        // A power loss cut its last line short; the next run's line is whole all the same.
        let handle = try FileHandle(forWritingTo: side)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"count":1,"entry":"univ"#.utf8))
        try handle.close()
        let second = TelemetryReporter(configuration: configuration, transport: ScriptedTransport([]))
        await second.setDirectoryIsOpen { _ in false }
        await second.record(known, count: 1)
        #expect(await second.pendingResolutions == 2, "the first run's event and this one; the torn line skipped")
        let third = TelemetryReporter(configuration: configuration, transport: ScriptedTransport([]))
        await third.setDirectoryIsOpen { _ in false }
        #expect(await third.pendingResolutions == 2, "both lines read back whole")

        // Turned off: nothing is written without protection.
        let elsewhere = temporaryDirectory()
        var off = TelemetryConfiguration(server: URL(string: "https://links.example")!, build: Self.build, token: "wm_w", cacheDirectory: elsewhere)
        off.keepsEventsWhileLocked = false
        let quiet = TelemetryReporter(configuration: off, transport: ScriptedTransport([]))
        await quiet.setDirectoryIsOpen { _ in false }
        await quiet.record(known, count: 1)
        #expect(!FileManager.default.fileExists(atPath: await quiet.sideJournalFile.path))
    }

    @Test("A journal that stays unreadable on an unlocked device is damaged: moved aside, and telemetry goes on")
    func damagedJournal() async throws {
        let directory = temporaryDirectory()
        let configuration = TelemetryConfiguration(server: URL(string: "https://links.example")!, build: Self.build, token: "wm_w", cacheDirectory: directory)
        let accepted = Result<TransportResponse, URLError>.success(TransportResponse(status: 202, body: Data(#"{"accepted":1,"rejected":[]}"#.utf8)))
        let transport = ScriptedTransport([accepted])
        let reporter = TelemetryReporter(configuration: configuration, transport: transport)
        let journal = await reporter.journalFile
        try FileManager.default.createDirectory(at: journal, withIntermediateDirectories: true)  // unreadable, whatever the device
        await reporter.record(Self.event("cart"), count: 1)
        guard case .delivered = await reporter.flush() else { Issue.record("not delivered"); return }
        #expect(FileManager.default.fileExists(atPath: journal.appendingPathExtension("unreadable").path), "kept aside, not deleted")
    }
}

extension ManifestClient {
    func setUnreadableRetry(_ seconds: TimeInterval) { unreadableRetry = seconds }
}

extension TelemetryReporter {
    func setDirectoryIsOpen(_ probe: @escaping @Sendable (URL) -> Bool) { directoryIsOpen = probe }
}
