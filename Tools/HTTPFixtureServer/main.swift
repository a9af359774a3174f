// Waymark's HTTP server with fixed routes, for `make bench-http` (beside nginx serving the
// same file) and the live tests with real clients:
//   GET/HEAD /manifest.json  the file, with a strong ETag; If-None-Match → 304. Bytes and
//                            ETag are computed once at start, never per request; a body of
//                            16 KiB or more is sent from a memory file (sendfile), as the
//                            daemon sends its large manifests and nginx its files.
//   POST /echo               the request body back (at most 64 KiB)
//
// Usage: HTTPFixtureServer FILE PORT [THREADS] [--access-log] [--pin] [--timeouts SECONDS]
import Foundation
import HTTPCore
import HTTPServer

let arguments = CommandLine.arguments
guard arguments.count >= 3, let port = UInt16(arguments[2]),
      let body = FileManager.default.contents(atPath: arguments[1]).map(Array.init)
else {
    FileHandle.standardError.write(Data("usage: HTTPFixtureServer FILE PORT [THREADS] [--access-log] [--pin] [--timeouts SECONDS]\n".utf8))
    exit(2)
}

/// FNV-1a over the bytes: a strong validator for a body that never changes while served.
var hash: UInt64 = 0xcbf2_9ce4_8422_2325
for byte in body { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
let etag = "\"\(String(hash, radix: 16))\""

let ok = {
    var response = HTTPResponse(status: .ok, headers: HTTPHeaders([("Content-Type", "application/json"), ("ETag", etag),
                                                                   ("Cache-Control", "no-cache")]), body: body)
    response.bodyFile = BodyFile.holding(body)
    return response
}()
let notModified = HTTPResponse(status: .notModified, headers: HTTPHeaders([("ETag", etag), ("Cache-Control", "no-cache")]))

var router = Router()
try! router.add("GET", "/manifest.json") { request, _ in
    // RFC 9110 §13.1.2: weak comparison for If-None-Match; "*" matches any current representation.
    if let condition = request.head.headers["If-None-Match"] {
        if condition == etag { return notModified }
        let tags = condition.utf8.split(separator: 0x2C).map { String(Substring($0)).trimmingCharacters(in: .whitespaces) }
        if tags.contains("*") || tags.contains(where: { $0 == etag || $0 == "W/" + etag }) { return notModified }
    }
    return ok
}
try! router.add("POST", "/echo", maximumBody: 64 * 1024) { request, _ in
    HTTPResponse(status: .ok, contentType: "application/octet-stream", body: request.body)
}

var configuration = ServerConfiguration()
configuration.hosts = ["127.0.0.1"]
configuration.port = port
configuration.accessLog = arguments.contains("--access-log")
configuration.pinThreads = arguments.contains("--pin")
if arguments.count >= 4, let threads = Int(arguments[3]) { configuration.threads = threads }
if let flag = arguments.firstIndex(of: "--timeouts"), flag + 1 < arguments.count, let seconds = Int64(arguments[flag + 1]) {
    // Short deadlines for the slow-client check.
    configuration.timeouts.head = seconds * 1_000_000_000
    configuration.timeouts.body = seconds * 1_000_000_000
    configuration.timeouts.write = seconds * 1_000_000_000
    configuration.timeouts.idle = 2 * seconds * 1_000_000_000
}
let server = HTTPServer(configuration: configuration, router: router)
do {
    try server.start()
} catch {
    FileHandle.standardError.write(Data("HTTPFixtureServer: \(error)\n".utf8))
    exit(1)
}
server.shutdownOnSignals()
// Unbuffered, so a script reading our output learns the port while we keep running.
FileHandle.standardOutput.write(Data("serving \(arguments[1]) (\(body.count) bytes, ETag \(etag)) on 127.0.0.1:\(server.port)\n".utf8))
server.wait()
