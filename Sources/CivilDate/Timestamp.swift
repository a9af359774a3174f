
/// RFC 3339 date-times (`2026-11-21T10:00:00Z`, `…10:00:00.250+01:00`) to seconds since
/// 1970 and back: the one parser and formatter of every module (routes' windows, stored
/// records, telemetry events, query ranges), on bytes, without a formatter, so every
/// platform reads them identically.
///
/// The rules: `YYYY-MM-DD`, `T` or `t`, `HH:MM:SS`, an optional fraction of one or more
/// digits, then `Z`, `z` or `±HH:MM` (hours ≤ 23, minutes ≤ 59); a real calendar day;
/// hours ≤ 23 and minutes ≤ 59. **Leap seconds:** RFC 3339 §5.6 allows a second of `60`;
/// seconds since 1970 (POSIX time) have no place for it, so `:60` is read as `:59` of the
/// same minute — one rule for every reader.
public enum Timestamp {
    /// The last date seen (its first ten bytes, checked, and its day number): the events
    /// of a batch mostly share a day, so its calendar arithmetic is done once.
    public struct DayCache {
        @usableFromInline var prefix: (UInt64, UInt16) = (0, 0)
        @usableFromInline var days = 0

        public init() {}
    }

    /// Seconds since 1970, the fraction dropped; nil unless `bytes` is an RFC 3339 date-time.
    @inlinable
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var cache = DayCache()
        return parse(bytes, cache: &cache)
    }

    /// The same, reusing `cache` across the timestamps of one batch.
    @inlinable
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>, cache: inout DayCache) -> Int? {
        var microseconds = 0
        return parse(bytes, cache: &cache, microseconds: &microseconds, readFraction: false)
    }

    /// Microseconds since 1970: the instant an RFC 3339 time names at the precision every
    /// reader can hold exactly (an integer, not a binary fraction). Digits of the fraction
    /// past the sixth are dropped, not rounded: `…59.9999999Z` is `…59.999999Z`, never the
    /// next second. Instants (windows, a resolution's `now`) compare as these integers.
    public static func parseMicroseconds(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var cache = DayCache()
        var microseconds = 0
        guard let seconds = parse(bytes, cache: &cache, microseconds: &microseconds, readFraction: true) else { return nil }
        return seconds * 1_000_000 + microseconds
    }

    @inlinable @inline(__always)
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, cache: inout DayCache, microseconds: inout Int, readFraction: Bool) -> Int? {
        guard bytes.count >= 20, let base = bytes.baseAddress else { return nil }
        let prefix = (UnsafeRawPointer(base).loadUnaligned(as: UInt64.self), UnsafeRawPointer(base + 8).loadUnaligned(as: UInt16.self))
        func digits(_ start: Int, _ count: Int) -> Int? {
            var value = 0
            for index in start..<start + count {
                let byte = bytes[index]
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        let days: Int
        if prefix == cache.prefix {
            days = cache.days
        } else {
            guard let year = digits(0, 4), bytes[4] == 0x2D, let month = digits(5, 2), bytes[7] == 0x2D, let day = digits(8, 2),
                  (1...12).contains(month), day >= 1, day <= CivilDate.daysIn(month: month, year: year) else { return nil }
            days = CivilDate.days(year: year, month: month, day: day)
            cache.prefix = prefix
            cache.days = days
        }
        guard bytes[10] | 0x20 == 0x74, let (hour, minute, second) = clock(UInt64(littleEndian: UnsafeRawPointer(base + 11).loadUnaligned(as: UInt64.self))),
              hour <= 23, minute <= 59, second <= 60 else { return nil }
        var index = 19
        if bytes[index] == 0x2E {
            index += 1
            let start = index
            var scale = 100_000
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                // Whole microseconds: the digits past the sixth are read (they must be digits) and dropped.
                if readFraction, scale > 0 {
                    microseconds += Int(bytes[index] - 0x30) * scale
                    scale /= 10
                }
                index += 1
            }
            guard index > start else { return nil }
        }
        guard index < bytes.count else { return nil }
        var offset = 0
        if bytes[index] | 0x20 == 0x7A {
            index += 1
        } else if bytes[index] == 0x2B || bytes[index] == 0x2D {
            guard index + 6 == bytes.count, let hours = digits(index + 1, 2), bytes[index + 3] == 0x3A, let minutes = digits(index + 4, 2),
                  hours <= 23, minutes <= 59 else { return nil }
            offset = (hours * 60 + minutes) * 60 * (bytes[index] == 0x2B ? 1 : -1)
            index += 6
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
        // The leap-second rule: :60 counts as :59.
        return days * 86_400 + hour * 3_600 + minute * 60 + min(second, 59) - offset
    }

    /// `HH:MM:SS`, eight bytes read as one little-endian word, to its three numbers; nil
    /// unless it is two digits, a colon, two digits, a colon and two digits.
    @inlinable @inline(__always)
    static func clock(_ word: UInt64) -> (hour: Int, minute: Int, second: Int)? {
        let digitBytes: UInt64 = 0xFFFF_00FF_FF00_FFFF, colons: UInt64 = 0x0000_3A00_003A_0000
        let zeros: UInt64 = 0x3030_0030_3000_3030, nibbles: UInt64 = 0xF0F0_F0F0_F0F0_F0F0
        // A digit is 0x30–0x39: its high nibble is 3, and stays 3 when 6 is added (no byte
        // can carry into the next once every high nibble is 3).
        let digits = word & digitBytes
        guard word & ~digitBytes == colons, digits & nibbles == zeros, (digits &+ 0x0606_0006_0600_0606) & nibbles == zeros else { return nil }
        // Each pair's value, tens × 10 + units, lands in the byte of its tens (at most 99).
        let values = word & 0x0F0F_000F_0F00_0F0F
        let pairs = values &* 10 &+ values >> 8
        return (Int(pairs & 0xFF), Int(pairs >> 24 & 0xFF), Int(pairs >> 48 & 0xFF))
    }

    /// `2026-11-21T10:00:00Z` for seconds since 1970 (whole seconds, UTC).
    public static func format(_ seconds: Int) -> String {
        let (days, second) = CivilDate.split(secondsSince1970: seconds)
        let (year, month, day) = CivilDate.date(fromDays: days)
        return "\(zeroPadded(year, width: 4))-\(zeroPadded(month, width: 2))-\(zeroPadded(day, width: 2))T"
            + "\(zeroPadded(second / 3_600, width: 2)):\(zeroPadded(second / 60 % 60, width: 2)):\(zeroPadded(second % 60, width: 2))Z"
    }
}
