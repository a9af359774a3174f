import CLibPQ
import Glibc

/// Why a database call failed: the connection (could not be made, or was lost), or the
/// server refused the statement (with its SQLSTATE, `23505` a unique violation…).
public enum PostgresError: Error, Equatable, Sendable, CustomStringConvertible {
    case connection(String)
    case statement(sqlState: String, message: String)

    public var description: String {
        switch self {
        case .connection(let message): "The database cannot be reached: \(message)"
        case .statement(let state, let message): "The database refused a statement (SQLSTATE \(state)): \(message)"
        }
    }

    /// Whether the connection is gone (a reconnect may succeed), not the statement wrong.
    public var isConnectionLost: Bool {
        if case .connection = self { return true }
        return false
    }
}

/// A statement's rows, as text (libpq's text format; `nil` for SQL NULL), and the count
/// of rows it changed (`INSERT`, `UPDATE`, `DELETE`), and the command's tag (`COMMIT`; a
/// `COMMIT` of a transaction a failed statement aborted answers `ROLLBACK`).
public struct PostgresRows: Sendable, Equatable {
    public let columns: [String]
    public let rows: [[String?]]
    public let affected: Int
    public let command: String

    public subscript(row: Int, column: String) -> String? {
        guard let index = columns.firstIndex(of: column), row < rows.count else { return nil }
        return rows[row][index]
    }
}

/// A notification a `LISTEN`ing connection received (`NOTIFY channel, 'payload'`).
public struct PostgresNotification: Sendable, Equatable {
    public let channel: String
    public let payload: String

    public init(channel: String, payload: String) {
        (self.channel, self.payload) = (channel, payload)
    }
}

/// One connection to PostgreSQL through the system's libpq: statements with parameters
/// (sent apart from the text, never spliced into it), `LISTEN`/`NOTIFY`, advisory locks.
/// Blocking, and for one thread at a time: the store gives each of its uses (writes, the
/// listener, the lease) a connection of its own. Closed when released.
public final class PostgresConnection {
    private let handle: OpaquePointer

    /// Connects to `url` (`postgres://user@host/db`, or `postgresql:///db?host=/socket/dir`:
    /// what libpq takes), waiting at most `timeout` seconds, with TCP keepalives so a peer
    /// that vanished is noticed (`docs/postgres.md`, "The lease").
    public init(url: String, timeout: Int = 5) throws(PostgresError) {
        let keys = ["dbname", "connect_timeout", "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count", "application_name"]
        let values = [url, String(max(1, timeout)), "1", "5", "2", "3", "waymark"]
        // expand_dbname = 1: the URL in dbname is parsed as a connection string, the rest set beside it.
        let connection = withArrayOfCStrings(keys) { keyPointers in
            withArrayOfCStrings(values) { valuePointers in PQconnectdbParams(keyPointers, valuePointers, 1) }
        }
        guard let connection else { throw .connection("libpq could not allocate a connection") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.message(PQerrorMessage(connection))
            PQfinish(connection)
            throw .connection(message)
        }
        handle = connection
    }

    deinit { PQfinish(handle) }

    /// Whether the connection is still up as far as libpq knows.
    public var isOpen: Bool { PQstatus(handle) == CONNECTION_OK }

    /// Runs one statement with `parameters` as `$1`, `$2`… (text; `nil` is NULL).
    @discardableResult
    public func execute(_ sql: String, _ parameters: [String?] = []) throws(PostgresError) -> PostgresRows {
        let result = withOptionalCStrings(parameters) { pointers in
            PQexecParams(handle, sql, Int32(parameters.count), nil, pointers, nil, nil, 0)
        }
        guard let result else { throw .connection(Self.message(PQerrorMessage(handle))) }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK:
            let columnCount = Int(PQnfields(result)), rowCount = Int(PQntuples(result))
            let columns = (0..<columnCount).map { String(cString: PQfname(result, Int32($0))) }
            let rows = (0..<rowCount).map { row in
                (0..<columnCount).map { column -> String? in
                    PQgetisnull(result, Int32(row), Int32(column)) == 1 ? nil : String(cString: PQgetvalue(result, Int32(row), Int32(column)))
                }
            }
            return PostgresRows(columns: columns, rows: rows, affected: Int(String(cString: PQcmdTuples(result))) ?? 0,
                                command: String(cString: PQcmdStatus(result)))
        default:
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
            let message = Self.message(PQresultErrorMessage(result))
            if PQstatus(handle) != CONNECTION_OK { throw .connection(message) }
            throw .statement(sqlState: state, message: message)
        }
    }

    /// `LISTEN` on `channel` (a plain identifier: letters, digits and `_`).
    public func listen(_ channel: String) throws(PostgresError) {
        guard !channel.isEmpty, channel.utf8.count <= 63, channel.utf8.allSatisfy({ Self.isIdentifierByte($0) }) else {
            throw .statement(sqlState: "42602", message: "A channel is 1 to 63 letters, digits and _.")
        }
        try execute("LISTEN " + channel)
    }

    /// The notifications received so far, waiting up to `timeout` seconds for the first when
    /// there is none yet (0: only what has arrived).
    public func notifications(waiting timeout: Double) throws(PostgresError) -> [PostgresNotification] {
        var received = drain()
        guard received.isEmpty, timeout > 0 else { return received }
        let socket = PQsocket(handle)
        guard socket >= 0 else { throw .connection("the connection has no socket") }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, Int32(min(timeout, 3_600) * 1_000))
        guard ready >= 0 || errno == EINTR else { throw .connection("poll failed (errno \(errno))") }
        guard PQconsumeInput(handle) == 1 else { throw .connection(Self.message(PQerrorMessage(handle))) }
        received = drain()
        return received
    }

    private func drain() -> [PostgresNotification] {
        var received: [PostgresNotification] = []
        _ = PQconsumeInput(handle)
        while let notice = PQnotifies(handle) {
            received.append(PostgresNotification(channel: String(cString: notice.pointee.relname), payload: String(cString: notice.pointee.extra)))
            PQfreemem(notice)
        }
        return received
    }

    /// `pg_try_advisory_lock(key)`: whether this session now holds the lock (held until
    /// released or the session ends).
    public func tryAdvisoryLock(_ key: Int64) throws(PostgresError) -> Bool {
        try execute("SELECT pg_try_advisory_lock($1::bigint) AS held", [String(key)])[0, "held"] == "t"
    }

    /// `pg_advisory_unlock(key)`: whether this session held it.
    @discardableResult
    public func advisoryUnlock(_ key: Int64) throws(PostgresError) -> Bool {
        try execute("SELECT pg_advisory_unlock($1::bigint) AS released", [String(key)])[0, "released"] == "t"
    }

    /// This session's server process id (`pg_backend_pid()`): what `pg_terminate_backend` names.
    public func backendProcessID() -> Int32 { PQbackendPID(handle) }

    static func message(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "no message" }
        return String(cString: text).trimmingTrailingWhitespace()
    }

    static func isIdentifierByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
    }
}

private extension String {
    func trimmingTrailingWhitespace() -> String {
        var text = Substring(self)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return String(text)
    }
}

/// `strings` as a C array of C strings, for the duration of `body`.
private func withArrayOfCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    withOptionalCStrings(strings.map(Optional.some)) { body($0) }
}

/// `strings` as a C array of C strings (`nil` a null pointer) followed by a null, for `body`.
private func withOptionalCStrings<R>(_ strings: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies: [UnsafeMutablePointer<CChar>?] = strings.map { $0.map { strdup($0)! } }
    defer { for copy in copies { free(copy) } }
    var pointers = copies.map { UnsafePointer($0) } + [nil]
    return pointers.withUnsafeMutableBufferPointer { body(UnsafePointer($0.baseAddress!)) }
}
