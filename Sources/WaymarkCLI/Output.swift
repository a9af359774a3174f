import Foundation

/// Where a command writes: strings in tests; the terminal, line by line, in `waymark`
/// (`echo`), so a daemon's start-up lines appear while it runs.
public struct Output: Sendable {
    public var standardOutput = ""
    public var standardError = ""
    public let echo: Bool

    public init(echo: Bool = false) { self.echo = echo }

    mutating func print(_ line: String = "") {
        if echo { FileHandle.standardOutput.write(Data((line + "\n").utf8)) } else { standardOutput += line + "\n" }
    }

    mutating func error(_ line: String) {
        if echo { FileHandle.standardError.write(Data((line + "\n").utf8)) } else { standardError += line + "\n" }
    }
}
