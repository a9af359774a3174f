import Foundation
import Testing

/// The privacy manifest the library ships (`Sources/WaymarkClient/PrivacyInfo.xcprivacy`,
/// a resource of the target): a property list the App Store reads, saying no tracking and
/// nothing linked to the user.
@Suite("Privacy manifest")
struct PrivacyManifestTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/WaymarkClient/PrivacyInfo.xcprivacy")

    @Test("A property list: no tracking, no tracking domain, every collected type unlinked and untracked, with a purpose")
    func declares() throws {
        let plist = try PropertyListSerialization.propertyList(from: Data(contentsOf: Self.file), format: nil)
        let root = try #require(plist as? [String: Any])
        #expect(root["NSPrivacyTracking"] as? Bool == false)
        #expect((root["NSPrivacyTrackingDomains"] as? [Any])?.isEmpty == true)
        let types = try #require(root["NSPrivacyCollectedDataTypes"] as? [[String: Any]])
        #expect(types.compactMap { $0["NSPrivacyCollectedDataType"] as? String }
            == ["NSPrivacyCollectedDataTypeProductInteraction", "NSPrivacyCollectedDataTypeOtherDiagnosticData"])
        for type in types {
            #expect(type["NSPrivacyCollectedDataTypeLinked"] as? Bool == false)
            #expect(type["NSPrivacyCollectedDataTypeTracking"] as? Bool == false)
            #expect((type["NSPrivacyCollectedDataTypePurposes"] as? [String])?.isEmpty == false)
        }
        #expect(root["NSPrivacyAccessedAPITypes"] is [Any])
    }

    @Test("It ships: the package copies it into the library's resources")
    func declaredInPackage() throws {
        let package = try String(contentsOf: Self.file.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(package.contains(#".target(name: "WaymarkClient", dependencies: ["RouteEngine"], resources: [.copy("PrivacyInfo.xcprivacy")])"#))
    }
}
