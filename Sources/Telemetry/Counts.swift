import LinkShapes
/// The aggregate of every accepted event: per-minute and per-hour buckets of counts keyed
/// by all dimensions packed in 64 bits, and the names interned for routes, preconditions
/// and app versions (each capped; past the cap a name is counted as `other`).
///
/// A value type with no locking; `TelemetryStore` owns one and serializes access.
public struct Counts: Sendable {
    public let limits: TelemetryLimits
    var routes: Interner
    var preconditions: Interner
    var appVersions: Interner
    /// Minute since 1970 → key → count; the last `minuteRetention`.
    var minutes: [Int32: CountTable] = [:]
    /// Hour since 1970 → key → count; the last `hourRetention`.
    var hours: [Int32: CountTable] = [:]
    /// Resolutions counted since the process started (not replayed ones), by platform,
    /// outcome, reason and route: the monotonic counters `/metrics` exposes.
    public internal(set) var sinceStart = CountTable()
    /// Resolutions clients said they dropped before sending (`client.dropped`) in batches
    /// accepted since the process started, by platform (`Platform.rawValue`).
    public internal(set) var droppedByClientsSinceStart = [UInt64](repeating: 0, count: Platform.allCases.count)
    static let metricMask = TelemetryDimension.platform.mask | TelemetryDimension.outcome.mask | TelemetryDimension.reason.mask
        | TelemetryDimension.route.mask
    /// Cells (a key in a bucket) held across every minute and hour bucket: at most
    /// `limits.maximumCells` with their own names, plus the folded ones (`fold`).
    public internal(set) var cells = 0
    /// Of them, those that keep names (not their own fold): what `limits.maximumCells` caps.
    public internal(set) var namedCells = 0
    /// Events counted in a folded cell because the cap was reached, since the process
    /// started (replayed ones included).
    public internal(set) var foldedEvents: UInt64 = 0
    /// Events counted in their hour only because they arrived past the lateness window,
    /// since the process started (replayed ones included).
    public internal(set) var lateEvents: UInt64 = 0
    /// The sequence number of the last batch applied.
    public internal(set) var lastSequence: UInt64 = 0
    /// For each follower that forwarded counts here: the highest `Forward.through` applied.
    public internal(set) var forwarded: [[UInt8]: UInt64] = [:]
    /// Unknown links by shape, in fixed memory (`limits.maximumShapes` held): the most
    /// followed ones with their counts, when first and last seen, on which platforms and
    /// through which entry points.
    public internal(set) var shapes: ShapeSketch
    /// The ids of accepted batches, for `limits.batchWindow` and at most
    /// `limits.maximumBatchIDs` (a repeat is not counted again).
    public internal(set) var batchIDs: BatchIDs
    /// The minute route ids were last given back (`reclaimRoutes`): at most once a minute.
    private var lastRouteReclaim = Int32.min
    /// Route ids given back since the process started.
    public internal(set) var reclaimedRoutes = 0

    public init(limits: TelemetryLimits = TelemetryLimits()) {
        self.limits = limits
        routes = Interner(reserved: ["", "other"], capacity: min(limits.maximumRoutes, TelemetryDimension.route.capacity - 1))
        preconditions = Interner(reserved: ["", "other"], capacity: min(limits.maximumPreconditions, TelemetryDimension.precondition.capacity - 1))
        appVersions = Interner(reserved: ["other"], capacity: min(limits.maximumAppVersions, TelemetryDimension.appVersion.capacity))
        shapes = ShapeSketch(capacity: max(1, limits.maximumShapes))
        batchIDs = BatchIDs(window: limits.batchWindow, capacity: limits.maximumBatchIDs)
    }

    /// Adds a batch as of `now` (seconds since 1970): every tally to its hour, and to its
    /// minute while that minute is still kept.
    /// `live`: a batch accepted now (counted in `sinceStart` too), not one replayed.
    public mutating func apply(_ batch: Batch, sequence: UInt64, now: Int, live: Bool = false) {
        if let id = batch.id { batchIDs.insert(id, minute: batch.acceptedMinute) }
        let appVersion = batch.appVersion.map { appVersions.id(for: $0) } ?? 0
        let minuteNow = Int32(clamping: now / 60)
        var routeIDs = batch.routes.map { routes.id(for: $0, minute: minuteNow) }
        // A new route past the cap: the ids counted least recently are given back (at most
        // once a minute), and the batch's names are interned again.
        if routes.isFull, zip(batch.routes, routeIDs).contains(where: { $0.1 == Interned.other && $0.0 != Interned.otherName }),
           minuteNow > lastRouteReclaim {
            reclaimRoutes(minute: minuteNow)
            routeIDs = batch.routes.map { routes.id(for: $0, minute: minuteNow) }
        }
        let preconditionIDs = batch.preconditions.map { preconditions.id(for: $0) }
        let oldestMinute = Int32(clamping: (now - limits.minuteRetention) / 60)
        let fixed = CountKey.pack(platform: batch.platform.rawValue, entry: 0, outcome: 0, reason: 0, precondition: 0,
                                  appVersion: appVersion, revision: UInt64(batch.revision), route: 0)
        // Sorted by minute, the tallies of a batch fall in a few runs; each run updates its
        // minute and hour buckets in place (one lookup per run, one hash per tally).
        // (A client records events in time order, so this is usually a check, not a sort.)
        let inOrder = zip(batch.tallies, batch.tallies.dropFirst()).allSatisfy { $0.minute <= $1.minute }
        let tallies = inOrder ? batch.tallies : batch.tallies.sorted { $0.minute < $1.minute }
        func key(_ tally: Tally) -> UInt64 {
            let route = tally.route < 2 ? UInt64(tally.route) : routeIDs[Int(tally.route) - 2]
            let precondition = tally.precondition < 2 ? UInt64(tally.precondition) : preconditionIDs[Int(tally.precondition) - 2]
            return fixed | CountKey.pack(platform: 0, entry: tally.entry, outcome: tally.outcome, reason: tally.reason,
                                         precondition: precondition, appVersion: 0, revision: 0, route: route)
        }
        func add(_ run: ArraySlice<Tally>, to bucket: inout CountTable, late: Bool = false) {
            // Late events may take new cells only up to half the cap: the rest is the present's.
            let room = late ? limits.maximumCells / 2 - namedCells : limits.maximumCells - namedCells
            let (named, foldedKeys, folded) = bucket.add(run, newKeysAllowed: max(0, room), fold: Self.fold) { (key($0), UInt64($0.count)) }
            namedCells += named
            cells += named + foldedKeys
            foldedEvents &+= folded
        }
        if live {
            sinceStart.add(tallies) { (key($0) & Self.metricMask, UInt64($0.count)) }
            droppedByClientsSinceStart[Int(batch.platform.rawValue)] &+= UInt64(batch.droppedByClient)
        }
        // Events older than the lateness window when their batch arrived (unknown for frames
        // from before the rule: 0) count in their hour only.
        let onTime = batch.acceptedMinute == 0 ? Int32.min : batch.acceptedMinute - Int32(limits.lateness / 60)
        var start = tallies.startIndex
        while start < tallies.endIndex {
            let hour = Self.hour(ofMinute: tallies[start].minute)
            var end = start
            while end < tallies.endIndex, Self.hour(ofMinute: tallies[end].minute) == hour { end += 1 }
            var first = start
            while first < end {
                let minute = tallies[first].minute
                var last = first
                while last < end, tallies[last].minute == minute { last += 1 }
                let late = minute < onTime
                if late { lateEvents &+= tallies[first..<last].reduce(0) { $0 + UInt64($1.count) } }
                add(tallies[first..<last], to: &hours[hour, default: CountTable()], late: late)
                if minute >= oldestMinute, !late { add(tallies[first..<last], to: &minutes[minute, default: CountTable()]) }
                first = last
            }
            start = end
        }
        for shape in batch.shapes {
            shapes.offer(String(decoding: shape.shape, as: UTF8.self), weight: UInt64(shape.count), minute: shape.minute,
                         platform: batch.platform.rawValue, entry: shape.entry, source: shape.source,
                         arrival: batch.acceptedMinute != 0 ? batch.acceptedMinute : shape.minute)
        }
        lastSequence = max(lastSequence, sequence)
    }

    /// The cell a count goes to once `limits.maximumCells` cells are held and its own is
    /// not among them: platform, entry, outcome and reason kept; app version and revision
    /// `other`; route and precondition `other` unless absent. Events are never dropped;
    /// only their detail is. At most 3 × 5 × 7 × 2 = 210 such cells per bucket (7: proceed,
    /// gated without and with a precondition, notFound with each of 4 reasons).
    static let foldMask = TelemetryDimension.platform.mask | TelemetryDimension.entry.mask | TelemetryDimension.outcome.mask
        | TelemetryDimension.reason.mask
    static let foldedCellsPerBucket = 210

    @inline(__always)
    static func fold(_ key: UInt64) -> UInt64 {
        let route = TelemetryDimension.route.value(of: key), precondition = TelemetryDimension.precondition.value(of: key)
        return key & foldMask | min(route, Interned.other) << TelemetryDimension.route.field.shift
            | min(precondition, Interned.other) << TelemetryDimension.precondition.field.shift
    }

    static func hour(ofMinute minute: Int32) -> Int32 { minute >= 0 ? minute / 60 : (minute - 59) / 60 }

    /// Drops buckets past their retention. Runs under the store's lock once a minute, so it
    /// reads only the cells it drops (their count taken off), not every cell held.
    public mutating func prune(now: Int) {
        let oldestMinute = Int32(clamping: (now - limits.minuteRetention) / 60)
        let oldestHour = Int32(clamping: (now - limits.hourRetention) / 3_600)
        for (minute, table) in minutes where minute < oldestMinute { forget(table) }
        for (hour, table) in hours where hour < oldestHour { forget(table) }
        minutes = minutes.filter { $0.key >= oldestMinute }
        hours = hours.filter { $0.key >= oldestHour }
        batchIDs.prune(now: now)
    }

    /// Takes a dropped bucket's cells off the tallies.
    private mutating func forget(_ table: CountTable) {
        cells -= table.count
        namedCells -= Self.namedCells(in: table)
    }

    /// The cells of a table that keep their names (not their own fold).
    private static func namedCells(in table: CountTable) -> Int {
        table.reduce(0) { $0 + (fold($1.0) != $1.0 ? 1 : 0) }
    }

    /// The route ids given back at once when a new route finds the table full: a sixteenth
    /// of the cap, so the scan of every cell it takes comes once per that many new routes
    /// and at most once a minute.
    var routesPerReclaim: Int { max(1, routes.capacity / 16) }

    /// Gives back the route ids counted least recently (`routesPerReclaim`, never one
    /// counted this minute): each of their cells, in every minute and hour bucket and in
    /// `sinceStart`, becomes the same cell with route `other` (added to it if it exists), so
    /// no count is lost, only the old route's name; then their ids take new names.
    /// - Complexity: O(cells held).
    mutating func reclaimRoutes(minute: Int32) {
        lastRouteReclaim = minute
        let given = routes.giveBackOldest(routesPerReclaim, keepingFrom: minute)
        guard !given.isEmpty else { return }
        reclaimedRoutes += given.count
        var gone = [Bool](repeating: false, count: routes.names.count)
        for id in given { gone[Int(id)] = true }
        let field = TelemetryDimension.route
        func relabelled(_ table: CountTable) -> CountTable? {
            guard table.contains(where: { Int(field.value(of: $0.0)) < gone.count && gone[Int(field.value(of: $0.0))] }) else { return nil }
            var out = CountTable(minimumCapacity: table.count)
            for (key, count) in table {
                let route = field.value(of: key)
                out.add(Int(route) < gone.count && gone[Int(route)] ? key & ~field.mask | Interned.other << field.field.shift : key, count)
            }
            return out
        }
        for (bucket, table) in minutes { if let changed = relabelled(table) { minutes[bucket] = changed } }
        for (bucket, table) in hours { if let changed = relabelled(table) { hours[bucket] = changed } }
        if let changed = relabelled(sinceStart) { sinceStart = changed }
        recountCells()
    }

    /// Each route id's last use from the buckets held (after a snapshot is read).
    mutating func noteRouteUses() {
        let field = TelemetryDimension.route
        for (minute, table) in minutes { for (key, _) in table { routes.noteUse(field.value(of: key), minute: minute) } }
        for (hour, table) in hours { for (key, _) in table { routes.noteUse(field.value(of: key), minute: hour &* 60) } }
    }

    /// Sets `cells` from the buckets held (after pruning or decoding).
    mutating func recountCells() {
        cells = minutes.values.reduce(0) { $0 + $1.count } + hours.values.reduce(0) { $0 + $1.count }
        namedCells = minutes.values.reduce(0) { $0 + Self.namedCells(in: $1) } + hours.values.reduce(0) { $0 + Self.namedCells(in: $1) }
    }

    /// Buckets held, for tests and metrics.
    public var bucketCounts: (minutes: Int, hours: Int) { (minutes.count, hours.count) }

    // MARK: Names

    /// The interned names, as a value: what a window (`window`) keeps to name its keys, and
    /// what names `sinceStart`'s keys once it is read out of the store's lock.
    public var names: CountNames { CountNames(routes: routes, preconditions: preconditions, appVersions: appVersions) }

    /// Whether `name` is a value the dimension can ever have (as opposed to one not seen yet).
    public static func isValid(_ name: String, for dimension: TelemetryDimension) -> Bool {
        switch dimension {
        case .platform: Platform.allCases.contains { $0.name == name }
        case .entry: EntryPoint.allCases.contains { $0.name == name }
        case .outcome: Outcome.allCases.contains { $0.name == name }
        case .reason: FailureReason.allCases.contains { $0.name == name }
        case .revision: name == "other" || UInt64(name).map { $0 > 0 } == true
        case .route, .precondition, .appVersion: !name.isEmpty && name.utf8.count <= 128
        }
    }
}

/// The names of the dimensions counted by name (routes, preconditions, app versions) and
/// of the fixed ones, both ways. Three interners: copied by reference until one is written.
public struct CountNames: Sendable {
    let routes: Interner
    let preconditions: Interner
    let appVersions: Interner

    /// The packed value of a dimension's name, or nil if no count can have it.
    public func value(of name: String, for dimension: TelemetryDimension) -> UInt64? {
        switch dimension {
        case .platform: return Platform.allCases.first { $0.name == name }.map { UInt64($0.rawValue) }
        case .entry: return EntryPoint.allCases.first { $0.name == name }.map { UInt64($0.rawValue) }
        case .outcome: return Outcome.allCases.first { $0.name == name }.map { UInt64($0.rawValue) }
        case .reason: return FailureReason.allCases.first { $0.name == name }.map { UInt64($0.rawValue) }
        case .revision: return name == "other" ? 0 : UInt64(name).flatMap { $0 > 0 && $0 <= UInt64(TelemetryDimension.revision.capacity) ? $0 : nil }
        case .route: return name == "none" ? Interned.none : routes.existingID(for: Array(name.utf8))
        case .precondition: return name == "none" ? Interned.none : preconditions.existingID(for: Array(name.utf8))
        case .appVersion: return appVersions.existingID(for: Array(name.utf8))
        }
    }

    /// The name of a packed value; "none" for an absent route, reason or precondition.
    public func name(of value: UInt64, for dimension: TelemetryDimension) -> String {
        switch dimension {
        case .platform: Platform(rawValue: UInt8(value))?.name ?? "?"
        case .entry: EntryPoint(rawValue: UInt8(value))?.name ?? "?"
        case .outcome: Outcome(rawValue: UInt8(value))?.name ?? "?"
        case .reason: FailureReason(rawValue: UInt8(value))?.name ?? "?"
        case .revision: value == 0 ? "other" : String(value)
        case .route: value == Interned.none ? "none" : routes.name(value)
        case .precondition: value == Interned.none ? "none" : preconditions.name(value)
        case .appVersion: appVersions.name(value)
        }
    }
}

/// Names to small ids, capped; the first ids are reserved. Each id remembers the minute it
/// was last counted, so that when the table is full the ids least recently counted can be
/// given back (`Counts.reclaimRoutes`) and new names admitted newest-first, as the
/// vocabulary does; a name given back is an empty slot (`free`) until a new one takes it.
struct Interner: Sendable {
    private(set) var names: [[UInt8]]
    private var ids: [Key: UInt64] = [:]
    /// The minute each id was last counted (index: the id; reserved ids unused).
    private(set) var lastUsed: [Int32]
    /// Ids whose names were given back, to be taken by new ones.
    private var free: [UInt64] = []

    /// A name as a dictionary key, hashed as one word (`NameTable.hash`): `Hasher` fed a
    /// name byte by byte was most of interning a batch's names.
    private struct Key: Hashable {
        let bytes: [UInt8]

        func hash(into hasher: inout Hasher) { hasher.combine(bytes.withUnsafeBufferPointer(NameTable.hash)) }
    }
    let reserved: Int
    let capacity: Int

    init(reserved: [String], capacity: Int) {
        names = reserved.map { Array($0.utf8) }
        lastUsed = Array(repeating: Int32.min, count: reserved.count)
        self.reserved = reserved.count
        self.capacity = capacity
    }

    /// `other`: the last reserved id, where a name past the cap is counted.
    var other: UInt64 { UInt64(reserved - 1) }

    /// Whether a new name would find no room.
    var isFull: Bool { free.isEmpty && names.count - reserved >= capacity }

    /// The id of `name`, interning it if there is room (a slot given back first); `other`
    /// if not. `minute`: when it is counted (its last use).
    mutating func id(for name: [UInt8], minute: Int32 = .min) -> UInt64 {
        if let id = ids[Key(bytes: name)] {
            if minute > lastUsed[Int(id)] { lastUsed[Int(id)] = minute }
            return id
        }
        let id: UInt64
        if let reused = free.popLast() {
            id = reused
            names[Int(id)] = name
            lastUsed[Int(id)] = minute
        } else {
            guard names.count - reserved < capacity else { return other }
            id = UInt64(names.count)
            names.append(name)
            lastUsed.append(minute)
        }
        ids[Key(bytes: name)] = id
        return id
    }

    /// Re-interns a name from a snapshot, whatever the cap now is: the stored counts use its
    /// id. An empty name is a slot given back.
    mutating func restore(_ name: [UInt8]) {
        let id = UInt64(names.count)
        names.append(name)
        lastUsed.append(.min)
        if name.isEmpty { free.append(id) } else { ids[Key(bytes: name)] = id }
    }

    /// Notes that `id` was counted in `minute` (from the buckets, after a snapshot is read).
    mutating func noteUse(_ id: UInt64, minute: Int32) {
        guard id >= UInt64(reserved), id < UInt64(lastUsed.count), minute > lastUsed[Int(id)] else { return }
        lastUsed[Int(id)] = minute
    }

    /// Gives back the `count` ids counted least recently (never one counted at or after
    /// `keepingFrom`): their names are forgotten, their slots free. Returns them.
    mutating func giveBackOldest(_ count: Int, keepingFrom minute: Int32) -> [UInt64] {
        let taken = Set(free), used = lastUsed
        let oldest = Array((reserved..<names.count).filter { !taken.contains(UInt64($0)) && used[$0] < minute }
            .sorted { used[$0] < used[$1] }.prefix(count))
        for index in oldest {
            ids[Key(bytes: names[index])] = nil
            names[index] = []
            lastUsed[index] = .min
            free.append(UInt64(index))
        }
        return oldest.map(UInt64.init)
    }

    func existingID(for name: [UInt8]) -> UInt64? {
        if let id = ids[Key(bytes: name)] { return id }
        return names[0..<reserved].firstIndex(of: name).map(UInt64.init)
    }

    func name(_ id: UInt64) -> String {
        id < UInt64(names.count) && !(id >= UInt64(reserved) && names[Int(id)].isEmpty) ? String(decoding: names[Int(id)], as: UTF8.self) : "?"
    }

    /// Names past the reserved ones, in id order (what a snapshot stores).
    var interned: ArraySlice<[UInt8]> { names[reserved...] }
}

/// What is known of one unknown-link shape besides its count: the minutes it was first and
/// last seen, and the platforms and entry points it came through (bit `rawValue` of each).
public struct ShapeNote: Hashable, Sendable {
    public var firstMinute: Int32
    public var lastMinute: Int32
    public var platforms: UInt8
    public var entries: UInt8
    /// Distinct sources it was seen from (hashes of source keys or networks), up to
    /// `ShapeSketch.maximumSources`.
    public var sources: [UInt32]

    public init(firstMinute: Int32, lastMinute: Int32, platforms: UInt8, entries: UInt8, sources: [UInt32] = []) {
        (self.firstMinute, self.lastMinute, self.platforms, self.entries, self.sources) = (firstMinute, lastMinute, platforms, entries, sources)
    }

    public var platformNames: [String] { Platform.allCases.filter { platforms & (1 << $0.rawValue) != 0 }.map(\.name) }
    public var entryNames: [String] { EntryPoint.allCases.filter { entries & (1 << $0.rawValue) != 0 }.map(\.name) }
}
