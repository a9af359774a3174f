import CivilDate

/// IMF-fixdate (RFC 9110 §5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT`, from seconds since 1970.
public enum HTTPDate {
    private static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    public static func format(secondsSince1970 seconds: Int) -> String {
        let (dayNumber, secondOfDay) = CivilDate.split(secondsSince1970: seconds)
        let (year, month, day) = CivilDate.date(fromDays: dayNumber)
        let weekday = days[((dayNumber % 7) + 7) % 7]
        func two(_ value: Int) -> String { zeroPadded(value, width: 2) }
        return "\(weekday), \(two(day)) \(months[month - 1]) \(zeroPadded(year, width: 4)) "
            + "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }
}
