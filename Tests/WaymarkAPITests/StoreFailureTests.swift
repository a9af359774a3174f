import Glibc
import ManifestStore
import SystemIO
import Telemetry
import Testing
@testable import WaymarkAPI

/// What a client is told when the store cannot make a change: a full disk is `507` with
/// `Retry-After` (it may work once space is freed), anything else `500`; and no answer
/// names a path of the server's.
@Suite("Store failures as answers")
struct StoreFailureTests {
    static let directory = "/var/lib/waymark-secret-place"

    static let rows: [(StoreError, Int, String)] = [
        (.io(IOError(call: "write", path: directory + "/revisions/.tmp-00000002", errno: ENOSPC)), 507, "insufficientStorage"),
        (.io(IOError(call: "fdatasync", path: directory + "/audit.log", errno: EDQUOT)), 507, "insufficientStorage"),
        (.io(IOError(call: "open", path: directory + "/revisions/.tmp-00000002", errno: EACCES)), 500, "storeFailed"),
        (.alreadyExists(directory + "/revisions/00000002"), 500, "storeFailed"),
        (.damaged(directory: directory, file: "revisions/00000001", reason: "the body's SHA-256 is x"), 500, "storeFailed"),
        (.inUse(directory: directory), 500, "storeFailed"),
    ]

    @Test(arguments: rows)
    func answer(_ error: StoreError, _ status: Int, _ code: String) {
        let response = Refusal.storeFailed(error, "The revision could not be stored", "Nothing was published.").response
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(response.status.code == status && text.contains("\"\(code)\""), "\(text)")
        #expect(!text.contains(Self.directory) && !text.contains("/var/lib"), "no server path in \(text)")
        #expect(error.message.contains(Self.directory) || error.message.contains("in use"), "the operator's message keeps it")
        #expect((response.headers["Retry-After"] != nil) == (status == 507))
    }

    @Test func telemetryFailuresNameNoPathEither() {
        let io = IOError(call: "pwrite", path: Self.directory + "/telemetry/log", errno: ENOSPC)
        for error in [TelemetryError.io(io), .unrepaired(io), .damaged(file: Self.directory + "/telemetry/snapshot", reason: "x")] {
            let response = TelemetryEndpoints.durable(.failure(error), answer: APIResponse.json([:]), what: "batch")
            let text = String(decoding: response.body, as: UTF8.self)
            #expect(response.status.code == 503 && response.headers["Retry-After"] == "5")
            #expect(!text.contains(Self.directory), "\(text)")
        }
    }
}
