/// Why a request cannot be read; each maps to the status RFC 9110/9112 give it. Every
/// one of them is a framing error after which the connection is closed.
public enum HTTPParserError: Error, Hashable, Sendable {
    case requestLineTooLong
    case invalidRequestLine
    case invalidMethod
    case invalidTarget
    case unsupportedVersion
    case invalidVersion
    case bareCR
    case bareLF
    case obsoleteLineFolding
    case whitespaceBeforeColon
    case invalidFieldName
    case invalidFieldValue
    case headTooLarge
    case tooManyHeaders
    case missingHost
    case multipleHost
    case invalidHost
    case invalidContentLength
    case conflictingContentLength
    case contentLengthWithTransferEncoding
    case transferEncodingInHTTP10
    case chunkedNotFinal
    case unsupportedTransferCoding
    case bodyTooLarge
    case invalidChunkSize
    case chunkSizeOverflow
    case invalidChunkExtension
    case chunkLineTooLong
    case invalidChunkTerminator
    case trailerTooLarge
    case invalidTrailer

    /// The response status for this error.
    public var status: HTTPStatus {
        switch self {
        case .requestLineTooLong: .uriTooLong                          // RFC 9112 §3
        case .unsupportedVersion: .httpVersionNotSupported             // RFC 9110 §15.6.6
        case .headTooLarge, .tooManyHeaders: .requestHeaderFieldsTooLarge  // RFC 6585 §5
        case .bodyTooLarge: .contentTooLarge                           // RFC 9110 §15.5.14
        case .unsupportedTransferCoding: .notImplemented               // RFC 9112 §6.1
        default: .badRequest
        }
    }

    /// A sentence for the error body.
    public var message: String {
        switch self {
        case .requestLineTooLong: "The request line is too long."
        case .invalidRequestLine: "The request line is not METHOD SP TARGET SP VERSION."
        case .invalidMethod: "The method is not a token."
        case .invalidTarget: "The request target is not a valid origin-form path."
        case .unsupportedVersion: "Only HTTP/1.0 and HTTP/1.1 are supported."
        case .invalidVersion: "The HTTP version is malformed."
        case .bareCR: "A CR not followed by LF."
        case .bareLF: "A line ends with LF instead of CRLF."
        case .obsoleteLineFolding: "Obsolete line folding is not accepted."
        case .whitespaceBeforeColon: "Whitespace between a field name and its colon."
        case .invalidFieldName: "A header field name is not a token."
        case .invalidFieldValue: "A header field value contains a control character."
        case .headTooLarge: "The request head is too large."
        case .tooManyHeaders: "The request has too many header fields."
        case .missingHost: "An HTTP/1.1 request needs a Host header."
        case .multipleHost: "The request has more than one Host header."
        case .invalidHost: "The Host header is not a valid host."
        case .invalidContentLength: "Content-Length must be decimal digits only."
        case .conflictingContentLength: "Content-Length is given twice with different values."
        case .contentLengthWithTransferEncoding: "Content-Length and Transfer-Encoding must not be combined."
        case .transferEncodingInHTTP10: "Transfer-Encoding is not allowed in HTTP/1.0."
        case .chunkedNotFinal: "chunked must be the final transfer coding."
        case .unsupportedTransferCoding: "Only the chunked transfer coding is supported."
        case .bodyTooLarge: "The request body is too large."
        case .invalidChunkSize: "A chunk size is not hexadecimal."
        case .chunkSizeOverflow: "A chunk size is too large."
        case .invalidChunkExtension: "A chunk extension is malformed."
        case .chunkLineTooLong: "A chunk-size line is too long."
        case .invalidChunkTerminator: "A chunk's data is not followed by CRLF."
        case .trailerTooLarge: "The chunked trailer section is too large."
        case .invalidTrailer: "A trailer field is malformed."
        }
    }
}
