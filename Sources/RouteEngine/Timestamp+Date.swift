import CivilDate
import Foundation

/// `Timestamp` (CivilDate's RFC 3339 reader and writer) for Foundation's `Date`, the time
/// type of routes' windows and stored records, and for the whole microseconds instants
/// are compared in (`docs/formats.md`, "Timestamps").
extension Timestamp {
    /// The instant `text` names, to the whole microsecond; nil unless it is an RFC 3339 date-time.
    public static func parse(_ text: String) -> Date? {
        microseconds(text).map(date(microseconds:))
    }

    /// Microseconds since 1970 that `text` names (digits past the sixth dropped); nil
    /// unless it is an RFC 3339 date-time.
    public static func microseconds(_ text: String) -> Int? {
        var text = text
        return text.withUTF8(parseMicroseconds)
    }

    /// Seconds between 1970 and 2001, Foundation's reference date.
    private static let referenceOffset = 978_307_200

    /// The `Date` of a whole number of microseconds since 1970.
    public static func date(microseconds: Int) -> Date {
        // One rounding, from an exact integer: from 1716 to 2286 (±2⁵³ µs around 2001) the
        // Date is within half a microsecond of the instant, so `microseconds(of:)` gives the
        // same integer back. Outside, a Date cannot hold every microsecond; instants read
        // from text (`microseconds(_:)`) never go through a Date.
        Date(timeIntervalSinceReferenceDate: Double(microseconds - referenceOffset * 1_000_000) / 1_000_000)
    }

    /// A `Date` as whole microseconds since 1970: the nearest one, because a `Date` is a
    /// binary fraction, today within a tenth of a microsecond of the instant it was made from
    /// (truncating could turn …999999 µs into …999998 µs). A port reading a clock with
    /// nanoseconds truncates them; for an instant that came from text both agree exactly.
    public static func microseconds(of date: Date) -> Int {
        let interval = date.timeIntervalSinceReferenceDate
        let seconds = interval.rounded(.down)
        let fraction = Int(((interval - seconds) * 1_000_000).rounded())
        return (Int(seconds) + referenceOffset) * 1_000_000 + fraction
    }

    /// `2026-03-01T00:00:00Z` (whole seconds, UTC).
    public static func format(_ date: Date) -> String {
        format(Int(date.timeIntervalSince1970.rounded(.down)))
    }

    /// `2026-03-01T00:00:00Z` for microseconds since 1970 (whole seconds, rounded down).
    public static func formatMicroseconds(_ microseconds: Int) -> String {
        format(microseconds >= 0 ? microseconds / 1_000_000 : -((-microseconds + 999_999) / 1_000_000))
    }
}
