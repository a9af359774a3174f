import CivilDate
import Foundation

/// `Timestamp` (CivilDate's RFC 3339 reader and writer) for Foundation's `Date`, the time
/// type of routes' windows and stored records.
extension Timestamp {
    /// The instant `text` names, fraction included; nil unless it is an RFC 3339 date-time.
    public static func parse(_ text: String) -> Date? {
        var text = text
        guard let (seconds, fraction) = text.withUTF8(parseWithFraction) else { return nil }
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// `2026-03-01T00:00:00Z` (whole seconds, UTC).
    public static func format(_ date: Date) -> String {
        format(Int(date.timeIntervalSince1970.rounded(.down)))
    }
}
