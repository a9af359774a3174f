/// Where a command writes: the real terminal in `waymark`, strings in tests.
public struct Output: Sendable {
    public var standardOutput = ""
    public var standardError = ""

    public init() {}

    mutating func print(_ line: String = "") { standardOutput += line + "\n" }
    mutating func error(_ line: String) { standardError += line + "\n" }
}
