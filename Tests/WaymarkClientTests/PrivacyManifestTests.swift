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

    /// Apple's required-reason APIs (developer.apple.com, "Describing use of required reason
    /// API"), by category, as they are spelled in Swift: a library that calls one must declare
    /// the category with a reason in `NSPrivacyAccessedAPITypes`, or an upload is refused
    /// (ITMS-91053). `ProcessInfo.systemUptime` slipped in once (a boot-time API).
    static let requiredReasonAPIs: [String: [String]] = [
        "NSPrivacyAccessedAPICategoryFileTimestamp": ["creationDate", "modificationDate", "contentModificationDate", "fileModificationDate",
                                                      "attributesOfItem", "getattrlist", "st_mtime", "st_ctime", "st_birthtime"],
        "NSPrivacyAccessedAPICategorySystemBootTime": ["systemUptime", "mach_absolute_time"],
        "NSPrivacyAccessedAPICategoryDiskSpace": ["volumeAvailableCapacity", "systemFreeSize", "systemSize", "statfs", "statvfs"],
        "NSPrivacyAccessedAPICategoryActiveKeyboards": ["activeInputModes"],
        "NSPrivacyAccessedAPICategoryUserDefaults": ["UserDefaults", "NSUserDefaults"],
    ]

    @Test("Every required-reason API the app's libraries call is declared (none is called today)")
    func requiredReasonAPIsAreDeclared() throws {
        let plist = try PropertyListSerialization.propertyList(from: Data(contentsOf: Self.file), format: nil)
        let declared = Set(((plist as? [String: Any])?["NSPrivacyAccessedAPITypes"] as? [[String: Any]] ?? [])
            .compactMap { $0["NSPrivacyAccessedAPIType"] as? String })
        let sources = Self.file.deletingLastPathComponent().deletingLastPathComponent()
        var files = 0
        for target in ["RouteEngine", "WaymarkClient", "WaymarkObservation", "CivilDate"] {
            let directory = sources.appendingPathComponent(target)
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".swift") {
                files += 1
                let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
                // Code only: a comment may name an API to say it is not used.
                let code = text.split(separator: "\n").map { line in line.range(of: "//").map { String(line[..<$0.lowerBound]) } ?? String(line) }.joined(separator: "\n")
                for (category, apis) in Self.requiredReasonAPIs where !declared.contains(category) {
                    for api in apis where code.contains(api) {
                        Issue.record("\(target)/\(name) calls \(api) (\(category)), which PrivacyInfo.xcprivacy does not declare")
                    }
                }
            }
        }
        #expect(files > 40)
    }

    @Test("It ships: the package copies it into the library's resources")
    func declaredInPackage() throws {
        let package = try String(contentsOf: Self.file.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(package.contains(#".target(name: "WaymarkClient", dependencies: ["RouteEngine"], resources: [.copy("PrivacyInfo.xcprivacy")])"#))
    }
}
