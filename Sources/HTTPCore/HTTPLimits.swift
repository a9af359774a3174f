/// Bounds on what a request may be, so no client can make the parser buffer without end.
/// Every value is configuration with the default given.
public struct HTTPLimits: Hashable, Sendable {
    /// Bytes of the request line, CRLF excluded. Default 8 KiB; a longer target is 414.
    public var maximumRequestLine = 8 * 1024
    /// Bytes of the whole head (request line and fields). Default 32 KiB; more is 431.
    public var maximumHeadBytes = 32 * 1024
    /// Header field lines. Default 100; more is 431.
    public var maximumHeaderCount = 100
    /// Decoded body bytes when a route sets no limit of its own. Default 1 MiB; more is 413.
    public var maximumBody = 1024 * 1024
    /// Bytes of one chunk-size line, extensions included. Default 1 KiB.
    public var maximumChunkLine = 1024
    /// Bytes of the chunked trailer section. Default 8 KiB.
    public var maximumTrailerBytes = 8 * 1024

    public init() {}
}
