/// The frozen matching structure: a trie over path segments whose literal edges live in
/// one open-addressing table keyed by (parent node, lowercased segment bytes), so a step
/// costs one hash and one comparison whatever the number of routes.
struct RouteTrie: Sendable {
    struct Node: Sendable {
        var parameterChild: Int32 = -1
        /// Index into `terminals` of the patterns ending here, or -1.
        var terminal: Int32 = -1
        /// Index into `terminals` of the `*rest` patterns starting below this node, or -1.
        var restTerminal: Int32 = -1
    }

    private(set) var nodes: [Node] = [Node()]
    /// Per terminal, the payloads (pattern indices) in insertion order.
    private(set) var terminals: [[Int]] = []
    private var edges = LiteralEdgeTable()
    /// Per terminal, `maskWords` words: bit `o` is set when some payload admits origin `o`.
    private var terminalOrigins: [UInt64] = []
    private let maskWords: Int

    /// - Parameter originCount: how many link origins (hosts and schemes) payloads may admit.
    init(originCount: Int = 0) {
        maskWords = max(1, (originCount + 63) / 64)
    }

    /// Adds a pattern; returns the terminal it ends in. Patterns of the same shape share a terminal.
    /// `origins[o]` says whether the payload answers links of origin `o`.
    /// - Complexity: O(segments).
    @discardableResult
    mutating func insert(_ pattern: URLPattern, payload: Int, origins: [Bool] = []) -> Int {
        let terminal = insertPath(pattern, payload: payload)
        for (origin, admitted) in origins.enumerated() where admitted {
            terminalOrigins[terminal * maskWords + origin / 64] |= 1 << UInt64(origin % 64)
        }
        return terminal
    }

    private mutating func insertPath(_ pattern: URLPattern, payload: Int) -> Int {
        var node: Int32 = 0
        for segment in pattern.segments {
            switch segment {
            case .literal(let text):
                let bytes = Array(text.utf8)
                if let child = edges.child(of: node, bytes) {
                    node = child
                } else {
                    let child = appendNode()
                    edges.insert(parent: node, bytes, child: child)
                    node = child
                }
            case .parameter:
                if nodes[Int(node)].parameterChild < 0 { nodes[Int(node)].parameterChild = appendNode() }
                node = nodes[Int(node)].parameterChild
            case .rest:
                if nodes[Int(node)].restTerminal < 0 { nodes[Int(node)].restTerminal = appendTerminal() }
                return appendPayload(payload, to: nodes[Int(node)].restTerminal)
            }
        }
        if nodes[Int(node)].terminal < 0 { nodes[Int(node)].terminal = appendTerminal() }
        return appendPayload(payload, to: nodes[Int(node)].terminal)
    }

    private mutating func appendNode() -> Int32 {
        nodes.append(Node())
        return Int32(nodes.count - 1)
    }

    private mutating func appendTerminal() -> Int32 {
        terminals.append([])
        terminalOrigins.append(contentsOf: repeatElement(0, count: maskWords))
        return Int32(terminals.count - 1)
    }

    @inline(__always)
    private func admits(_ terminal: Int32, _ origin: Int) -> Bool {
        terminalOrigins[Int(terminal) * maskWords + origin / 64] & (1 << UInt64(origin % 64)) != 0
    }

    private mutating func appendPayload(_ payload: Int, to terminal: Int32) -> Int {
        terminals[Int(terminal)].append(payload)
        return Int(terminal)
    }

    /// Finds the terminal for the given segments by precedence per segment, left to right:
    /// literal, then `:param`, then `*rest`; backtracks when a branch dead-ends. Only
    /// terminals with a payload admitting `origin`, and that `filter` accepts (the
    /// resolver's: one of them is live now), count as matches; a refused terminal is a dead
    /// end like any other. Generic, so the filter's check is specialized in, not called.
    /// - Complexity: O(segments) for typical tables; at worst each trie node is visited
    ///   once (a node sits at one depth), never exponential.
    func match<Filter: TerminalFilter>(segments: UnsafeBufferPointer<Range<Int>>, bytes: UnsafeMutableBufferPointer<UInt8>, origin: Int,
                                       filter: inout Filter) -> Int? {
        walk(0, 0, segments, UnsafeBufferPointer(bytes), origin, &filter)
    }

    private func walk<Filter: TerminalFilter>(
        _ node: Int32, _ depth: Int, _ segments: UnsafeBufferPointer<Range<Int>>, _ bytes: UnsafeBufferPointer<UInt8>, _ origin: Int,
        _ filter: inout Filter
    ) -> Int? {
        let current = nodes[Int(node)]
        if depth == segments.count {
            return current.terminal >= 0 && admits(current.terminal, origin) && filter.accepts(Int(current.terminal)) ? Int(current.terminal) : nil
        }
        if let child = edges.child(of: node, UnsafeBufferPointer(rebasing: bytes[segments[depth]])),
           let found = walk(child, depth + 1, segments, bytes, origin, &filter) {
            return found
        }
        if current.parameterChild >= 0, let found = walk(current.parameterChild, depth + 1, segments, bytes, origin, &filter) {
            return found
        }
        if current.restTerminal >= 0, admits(current.restTerminal, origin), filter.accepts(Int(current.restTerminal)) {
            return Int(current.restTerminal)
        }
        return nil
    }
}

/// Which of the terminals a match reaches count: the resolver's says whether a route of
/// the shape is live now, and remembers what it saw.
protocol TerminalFilter {
    mutating func accepts(_ terminal: Int) -> Bool
}

/// Open addressing with linear probing over (parent, ASCII-lowercased literal).
struct LiteralEdgeTable: Sendable {
    private struct Slot: Sendable {
        var hash: UInt64 = 0
        var parent: Int32 = -1
        var child: Int32 = -1
        var start: Int32 = 0
        var length: Int32 = 0
    }

    private var slots: [Slot] = Array(repeating: Slot(), count: 16)
    private var pool: [UInt8] = []
    private var count = 0

    /// FNV-1a over the lowercased bytes, seeded with the parent node.
    @inline(__always)
    private static func hash(parent: Int32, _ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ (UInt64(UInt32(bitPattern: parent)) &* 0x9E37_79B9_7F4A_7C15)
        for byte in bytes {
            hash = (hash ^ UInt64(lowercaseASCII(byte))) &* 0x100_0000_01b3
        }
        return hash ^ (hash >> 29)
    }

    func child(of parent: Int32, _ bytes: UnsafeBufferPointer<UInt8>) -> Int32? {
        let hash = Self.hash(parent: parent, bytes)
        return slots.withUnsafeBufferPointer { slots in
            pool.withUnsafeBufferPointer { pool in
                let mask = slots.count - 1
                var index = Int(truncatingIfNeeded: hash) & mask
                while true {
                    let slot = slots[index]
                    if slot.parent < 0 { return nil }
                    if slot.hash == hash, slot.parent == parent, Int(slot.length) == bytes.count {
                        var equal = true
                        for offset in 0..<bytes.count where pool[Int(slot.start) + offset] != lowercaseASCII(bytes[offset]) {
                            equal = false
                            break
                        }
                        if equal { return slot.child }
                    }
                    index = (index + 1) & mask
                }
            }
        }
    }

    func child(of parent: Int32, _ lowercased: [UInt8]) -> Int32? {
        lowercased.withUnsafeBufferPointer { child(of: parent, $0) }
    }

    mutating func insert(parent: Int32, _ lowercased: [UInt8], child: Int32) {
        if (count + 1) * 2 > slots.count { grow() }
        let start = Int32(pool.count)
        pool.append(contentsOf: lowercased)
        place(Slot(hash: Self.hash(parent: parent, lowercased), parent: parent, child: child, start: start,
                   length: Int32(lowercased.count)))
        count += 1
    }

    private mutating func place(_ slot: Slot) {
        let mask = slots.count - 1
        var index = Int(truncatingIfNeeded: slot.hash) & mask
        while slots[index].parent >= 0 { index = (index + 1) & mask }
        slots[index] = slot
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: Slot(), count: old.count * 2)
        for slot in old where slot.parent >= 0 { place(slot) }
    }
}
