import Foundation

/// Where a command writes: strings in tests; the terminal, line by line, in `waymark`
/// (`echo`), so a daemon's start-up lines appear while it runs.
public struct Output: Sendable {
    public var standardOutput = ""
    public var standardError = ""
    public let echo: Bool

    public init(echo: Bool = false) { self.echo = echo }

    mutating func print(_ line: String = "") {
        write(line + "\n")
    }

    /// Exactly `text`, no newline added (a document whose bytes matter).
    mutating func write(_ text: String) {
        if echo { FileHandle.standardOutput.write(Data(text.utf8)) } else { standardOutput += text }
    }

    mutating func error(_ line: String) {
        if echo { FileHandle.standardError.write(Data((line + "\n").utf8)) } else { standardError += line + "\n" }
    }

    /// Rows as aligned columns, two spaces apart; the last column is not padded, and no
    /// line ends in spaces.
    mutating func table(_ rows: [[String]]) {
        let columns = rows.map(\.count).max() ?? 0
        let widths = (0..<columns).map { column in rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
        for row in rows {
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }
            print(String(cells.joined(separator: "  ").reversed().drop(while: { $0 == " " }).reversed()))
        }
    }
}
