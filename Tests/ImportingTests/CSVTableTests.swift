import Importing
import LibraryTestSupport
import Testing

/// RFC 4180 as exports write it: table rows for the rules, each problem named by row and
/// field, the limits, and 3,000 random tables written and read back.
@Suite("CSV tables")
struct CSVTableTests {
    static let rows: [(String, String, [[String]]?)] = [
        ("plain", "a,b\n1,2\n", [["a", "b"], ["1", "2"]]),
        ("CRLF", "a,b\r\n1,2\r\n", [["a", "b"], ["1", "2"]]),
        ("no line break at the end", "a,b\n1,2", [["a", "b"], ["1", "2"]]),
        ("blank lines are no rows", "a\n\n\nb\n", [["a"], ["b"]]),
        ("empty fields", ",,\n", [["", "", ""]]),
        ("a quoted empty field is a row", "\"\"\n", [[""]]),
        ("quotes, commas and line breaks inside quotes", "\"a,b\",\"say \"\"hi\"\"\",\"two\r\nlines\"\n", [["a,b", "say \"hi\"", "two\r\nlines"]]),
        ("a byte order mark", "\u{FEFF}short link,link\n", [["short link", "link"]]),
        ("UTF-8 text", "caf\u{e9},\u{1F375}\n", [["caf\u{e9}", "\u{1F375}"]]),
        ("a lone CR is text", "a\rb\n", [["a\rb"]]),
        ("spaces are kept", " a , b \n", [[" a ", " b "]]),
        ("a quote inside an unquoted field", "ab\"c\n", nil),
        ("text after a closing quote", "\"ab\"c\n", nil),
        ("an unterminated quote", "\"ab\n", nil),
        ("an empty file", "", []),
    ]

    @Test(arguments: rows)
    func reads(_ row: (String, String, [[String]]?)) {
        let read = try? CSVTable(Array(row.1.utf8))
        #expect(read?.rows == row.2, "\(row.0)")
    }

    @Test func problemsNameTheirRowAndField() {
        #expect(throws: CSVTable.Problem.quoteInUnquotedField(row: 2, field: 3)) { try CSVTable(Array("a,b,c\n1,2,3\"\n".utf8)) }
        #expect(throws: CSVTable.Problem.unterminatedQuote(row: 3, field: 1)) { try CSVTable(Array("a\nb\n\"open, and never closed\n".utf8)) }
        #expect(throws: CSVTable.Problem.notUTF8(row: 1, field: 2)) { try CSVTable([UInt8(ascii: "a"), UInt8(ascii: ","), 0xFF, 0x0A]) }
        #expect(throws: CSVTable.Problem.textAfterClosingQuote(row: 1, field: 1)) { try CSVTable(Array("\"a\" ,b\n".utf8)) }
    }

    @Test func limitsAreHeldBeforeMoreIsRead() {
        var limits = CSVTable.Limits()
        (limits.maximumFieldBytes, limits.maximumFields, limits.maximumRows) = (8, 3, 2)
        #expect(throws: CSVTable.Problem.fieldTooLong(row: 1, field: 2, limit: 8)) { try CSVTable(Array("a,123456789\n".utf8), limits: limits) }
        #expect(throws: CSVTable.Problem.fieldTooLong(row: 1, field: 1, limit: 8)) { try CSVTable(Array("\"12345678\n9".utf8), limits: limits) }
        #expect(throws: CSVTable.Problem.tooManyFields(row: 1, limit: 3)) { try CSVTable(Array("a,b,c,d\n".utf8), limits: limits) }
        #expect(throws: CSVTable.Problem.tooManyRows(limit: 2)) { try CSVTable(Array("a\nb\nc\n".utf8), limits: limits) }
        #expect((try? CSVTable(Array("12345678,b,c\nx\n".utf8), limits: limits))?.rows.count == 2, "at the limits: read")
        // A million one-byte rows stop at the row limit, not at the end of the bytes.
        let million = [UInt8](repeating: UInt8(ascii: "\n"), count: 1) + Array(repeating: [UInt8(ascii: "x"), UInt8(ascii: "\n")], count: 1_000_000).flatMap { $0 }
        #expect(throws: CSVTable.Problem.tooManyRows(limit: CSVTable.Limits().maximumRows)) { try CSVTable(million) }
    }

    /// Random tables of hostile fields (quotes, commas, CR, LF, non-ASCII, empty), written
    /// as RFC 4180 says (quoted when they need it), read back as they were.
    @Test func whatIsWrittenIsReadBack() throws {
        var generator = SplitMix(seed: 4180)
        let pieces = ["a", "\"", ",", "\r", "\n", "\r\n", " ", "\u{e9}", "\u{1F375}", "x,y", "\"\"", ""]
        for _ in 0..<3_000 {
            let rowCount = 1 + Int(generator.next() % 5), fieldCount = 1 + Int(generator.next() % 5)
            var table: [[String]] = []
            for _ in 0..<rowCount {
                table.append((0..<fieldCount).map { _ in (0..<Int(generator.next() % 4)).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }.joined() })
            }
            let text = table.map { row in
                row.map { field in
                    let needs = field.isEmpty || field.contains(where: { $0 == "\"" || $0 == "," || $0 == "\r" || $0 == "\n" || $0 == "\r\n" })
                    return needs ? "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : field
                }.joined(separator: ",")
            }.joined(separator: generator.next() % 2 == 0 ? "\n" : "\r\n")
            let read = try CSVTable(Array(text.utf8))
            #expect(read.rows == table, "\(text.debugDescription)")
        }
    }
}
