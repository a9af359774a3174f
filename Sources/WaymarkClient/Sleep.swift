/// Every wait the client library sleeps: a number of seconds from anywhere (a server's
/// `Retry-After`, a configuration, arithmetic) turned into nanoseconds that cannot trap.
/// `UInt64(seconds * 1e9)` traps past 18.4e9 s (584 years) and on NaN or infinity, so a
/// `Retry-After` of 10^12 s or a date in the year 9999 would crash the app.
enum Sleep {
    /// The longest wait, about 31 years: longer means "not in this process's life".
    static let longestSeconds: Double = 1e9

    /// Nanoseconds for `seconds`: 0 for negative or NaN, `longestSeconds` at most.
    static func nanoseconds(_ seconds: Double) -> UInt64 {
        guard seconds > 0 else { return 0 }  // also NaN
        return UInt64(min(seconds, longestSeconds) * 1_000_000_000)
    }

    /// Sleeps `seconds` (bounded as above); returns early, without throwing, when cancelled.
    static func seconds(_ seconds: Double) async {
        try? await Task.sleep(nanoseconds: nanoseconds(seconds))
    }
}
