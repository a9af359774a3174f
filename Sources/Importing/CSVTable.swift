/// A CSV file as rows of fields (RFC 4180, as Google Takeout, Branch and spreadsheets write
/// it): fields separated by `,`, rows by CRLF or LF; a field in double quotes may hold commas,
/// line breaks and `""` for a quote. Read in one pass over the bytes with every dimension
/// bounded before it is held: a field's bytes, a row's fields, the rows. A UTF-8 byte order
/// mark at the start is skipped. Nothing is guessed: a quote inside an unquoted field, text
/// after a closing quote, an unterminated quote or invalid UTF-8 is an error naming the row
/// (counted from 1, the header included) and the field.
public struct CSVTable: Sendable {
    public let rows: [[String]]

    public struct Limits: Sendable {
        public var maximumFieldBytes = 8_192
        public var maximumFields = 64
        public var maximumRows = 100_000
        public init() {}
    }

    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        case fieldTooLong(row: Int, field: Int, limit: Int)
        case tooManyFields(row: Int, limit: Int)
        case tooManyRows(limit: Int)
        case quoteInUnquotedField(row: Int, field: Int)
        case textAfterClosingQuote(row: Int, field: Int)
        case unterminatedQuote(row: Int, field: Int)
        case notUTF8(row: Int, field: Int)

        public var description: String {
            switch self {
            case .fieldTooLong(let row, let field, let limit): "Row \(row), field \(field) is longer than \(limit) bytes."
            case .tooManyFields(let row, let limit): "Row \(row) has more than \(limit) fields."
            case .tooManyRows(let limit): "The file has more than \(limit) rows."
            case .quoteInUnquotedField(let row, let field): "Row \(row), field \(field): a quote inside a field that does not start with one (quote the whole field, and double the quote)."
            case .textAfterClosingQuote(let row, let field): "Row \(row), field \(field): text after the closing quote."
            case .unterminatedQuote(let row, let field): "Row \(row), field \(field): a quote is opened and never closed."
            case .notUTF8(let row, let field): "Row \(row), field \(field) is not UTF-8 text."
            }
        }
    }

    /// - Complexity: O(bytes); holds at most the limits' rows × fields × bytes.
    public init(_ bytes: some Collection<UInt8>, limits: Limits = Limits()) throws(Problem) {
        var rows: [[String]] = []
        var row: [String] = []
        var field: [UInt8] = []
        var quoted = false, closed = false, inQuotes = false, atFieldStart = true
        var index = bytes.startIndex
        // A byte order mark before the first field is not text.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = bytes.index(index, offsetBy: 3) }
        func endField() throws(Problem) {
            guard row.count < limits.maximumFields else { throw .tooManyFields(row: rows.count + 1, limit: limits.maximumFields) }
            guard let text = String(validating: field, as: UTF8.self) else { throw .notUTF8(row: rows.count + 1, field: row.count + 1) }
            row.append(text)
            field.removeAll(keepingCapacity: true)
            (quoted, closed, atFieldStart) = (false, false, true)
        }
        func endRow() throws(Problem) {
            let wasQuoted = quoted
            try endField()
            // A line holding nothing at all (a blank line, the file's last line break) is no row.
            if !(row.count == 1 && row[0].isEmpty && !wasQuoted) {
                guard rows.count < limits.maximumRows else { throw .tooManyRows(limit: limits.maximumRows) }
                rows.append(row)
            }
            row = []
        }
        while index != bytes.endIndex {
            let byte = bytes[index]
            index = bytes.index(after: index)
            if inQuotes {
                if byte == UInt8(ascii: "\"") {
                    if index != bytes.endIndex, bytes[index] == UInt8(ascii: "\"") {
                        index = bytes.index(after: index)
                        field.append(byte)
                    } else {
                        (inQuotes, closed) = (false, true)
                    }
                } else {
                    field.append(byte)
                }
            } else {
                switch byte {
                case UInt8(ascii: ","):
                    try endField()
                    continue
                case UInt8(ascii: "\n"):
                    try endRow()
                    continue
                case UInt8(ascii: "\r") where index != bytes.endIndex && bytes[index] == UInt8(ascii: "\n"):
                    continue  // the LF ends the row
                case UInt8(ascii: "\""):
                    guard atFieldStart else { throw .quoteInUnquotedField(row: rows.count + 1, field: row.count + 1) }
                    (inQuotes, quoted) = (true, true)
                default:
                    guard !closed else { throw .textAfterClosingQuote(row: rows.count + 1, field: row.count + 1) }
                    field.append(byte)
                }
                atFieldStart = false
            }
            guard field.count <= limits.maximumFieldBytes else {
                throw .fieldTooLong(row: rows.count + 1, field: row.count + 1, limit: limits.maximumFieldBytes)
            }
        }
        guard !inQuotes else { throw .unterminatedQuote(row: rows.count + 1, field: row.count + 1) }
        try endRow()
        self.rows = rows
    }
}
