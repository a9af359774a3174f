#!/usr/bin/env python3
"""Every type or member `ARCHITECTURE.md` and `docs/*.md` name in backticks still exists.

A name is checked when it reads as code: a type in CamelCase of two words or more
(`RouteEngine`, `JSONValue`, `DraftImpact`), optionally with a member (`Counts.batches`,
`DocumentTurns(atOnce:)`), or any capitalised type with a member (`Forward.hold`). It exists
when Sources/, Tests/ or waymark-android/src declare it (a Swift or Kotlin type; a func,
var, let, case, fun or val for a member), when it is a target of Package.swift, a word of
deploy/ (alert names, manifests' kinds), a name the same document's code blocks declare,
a file of the repository (`Codec.swift`), or a platform's own (the list below: Foundation,
SwiftUI, UIKit, Android, the JDK). Anything else fails, naming the document and the line:
a renamed or removed type left in the prose another team ports from.

The check first runs on a planted stale name and fails if it would not catch it.

The app's half has one version, in `VERSION` (the tag it is released under): the Swift
package lines of the docs (`from: "…"`), the Android module's `version` and its Maven
coordinates in the docs must all say it.

    python3 Tests/Scripts/check-docs.py [repository]
"""
import glob
import os
import re
import sys

# Platforms' names the documents may use (Apple's, Android's, the JDK's, Swift's, libpq's, other servers').
PLATFORM = {
    "PQexecParams", "PQconsumeInput", "PQnotifies", "PQconnectdbParams",
    "NavigationStack", "TabView", "JSONDecoder", "JSONSerialization", "CompletableFuture", "Codable", "WorkManager",
    "TaskStackBuilder", "NavOptions", "NavController", "NavHost", "NavHostController", "Dispatchers", "CompletableDeferred", "InstallReferrerClient", "MessageDigest", "AtomicReference", "URLRequest",
    "URLSession", "URLSessionConfiguration", "DispatchSource", "DispatchQueue", "Identifiable", "NoNewPrivileges",
    "VolumeSnapshot", "NIOPosix", "FoundationNetworking", "UIApplication", "UIScene", "UIWindowScene", "UIViewController",
    "UINavigationController", "UITabBarController", "UIPasteControl", "NSUserActivity", "SceneDelegate", "AppDelegate",
    "ObservableObject", "StateObject", "EnvironmentObject", "NavigationPath", "ScenePhase", "UserDefaults",
    "FileManager", "ProcessInfo", "HummingbirdTesting", "PrivacyInfo", "LinkedHashMap", "HashMap", "ConcurrentHashMap",
    "ExecutorService", "SharedPreferences", "AndroidManifest", "MainActivity", "BuildConfig", "SecureRandom",
    "StandardCharsets", "ByteArrayOutputStream", "HttpURLConnection", "InputStream", "OutputStream", "IllegalStateException",
    "OutOfMemoryError", "RuntimeException", "IOException", "InterruptedException", "TimeUnit", "CountDownLatch",
    "JSONEncoder", "DateFormatter", "ISO8601DateFormatter", "NSLock", "OSAllocatedUnfairLock", "AsyncStream",
    "CheckedContinuation", "TaskGroup", "MainActor", "XCTest", "XCTestCase", "ContinuousClock", "SuspendingClock",
    "UUID", "URLComponents", "URLQueryItem", "DataTask", "StatefulSet", "PodDisruptionBudget", "NetworkPolicy",
    "ConfigMap", "PersistentVolumeClaim", "ServiceMonitor", "PrometheusRule", "LoadBalancer", "ClusterIP",
    "SwiftUI", "UIKit", "WebKit", "SFSafariViewController", "WKWebView", "Intent", "Uri", "Context", "Class", "Char",
    "Hasher", "Sendable", "Equatable", "Hashable", "Comparable", "CustomStringConvertible", "RandomNumberGenerator",
    "Mutex", "Atomic", "Synchronization", "Glibc", "Dispatch", "Foundation", "Observation", "Testing", "String",
}
# Other projects' files the documents cite.
EXTERNAL_PATHS = {"event/event_epoll.c"}
# Backticked text that reads as code and is not: examples of what a rule refuses.
EXAMPLES = {"AbCdEfGh"}
DECLARATION = re.compile(r"\b(?:struct|class|enum|protocol|typealias|actor|extension|object|interface)\s+([A-Z][A-Za-z0-9_]*)")
MEMBER = re.compile(r"\b(?:func|var|let|case|fun|val|init)\s+`?([a-zA-Z_][A-Za-z0-9_]*)")
KOTLIN_EXTENSION = re.compile(r"\bfun\s+(?:<[^>]*>\s*)?([A-Z][A-Za-z0-9_]*)\.([a-zA-Z_][A-Za-z0-9_]*)")
CASES = re.compile(r"\bcase\s+([a-z][A-Za-z0-9_]*(?:\s*,\s*[a-z][A-Za-z0-9_]*)+)")
# `Type`, `Type.member`, `Type.member(label:)`, `Type(label:)`.
NAME = re.compile(r"`([A-Z][A-Za-z0-9]*)((?:\.[A-Za-z][A-Za-z0-9]*)?)(?:\([^`]*\))?`")
# A file named by its path (`Telemetry/Frame.swift`, `Tests/Scripts/hostile.py`): it exists
# from the repository's root, from Sources/, or (a document's neighbour) from docs/.
PATH = re.compile(r"`((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]+\.(?:swift|kt|py|sh|md|json|yaml|c|h|html|kts))`")
ROOT = "."
FILE_SUFFIXES = ("swift", "kt", "md", "json", "xcprivacy", "py", "sh", "yaml", "html", "c", "h")


def known_names(root):
    """Types, and per type the members of every file that declares or extends it (a member
    is looked for beside its type, not anywhere: `peer` is common, `EvidenceNetwork.peer` gone)."""
    types, members = set(), {}
    for pattern in ("Sources/**/*.swift", "Sources/**/*.h", "Tests/**/*.swift", "waymark-android/src/**/*.kt"):
        for path in glob.glob(os.path.join(root, pattern), recursive=True):
            text = open(path, encoding="utf-8", errors="replace").read()
            declared = set(DECLARATION.findall(text))
            types.update(declared)
            here = set(MEMBER.findall(text)) | declared
            for listed in CASES.findall(text):
                here.update(name.strip() for name in listed.split(","))
            for kind in declared:
                members.setdefault(kind, set()).update(here)
            # Kotlin's extension functions: `fun NavigationState.applying(…)`.
            for kind, name in KOTLIN_EXTENSION.findall(text):
                members.setdefault(kind, set()).add(name)
    package = open(os.path.join(root, "Package.swift"), encoding="utf-8").read()
    targets = set(re.findall(r'name:\s*"([A-Za-z][A-Za-z0-9-]*)"', package))
    # A target's name with one of its types (`LinkChecks.FallbackAddresses`).
    for target in targets:
        members.setdefault(target, set()).update(types)
    types.update(targets)
    words = set()
    for path in glob.glob(os.path.join(root, "deploy", "**", "*"), recursive=True):
        if os.path.isfile(path):
            words.update(re.findall(r"[A-Za-z][A-Za-z0-9]+", open(path, encoding="utf-8", errors="replace").read()))
    paths = ["/" + os.path.relpath(path, root) for path in glob.glob(os.path.join(root, "**", "*"), recursive=True)
             if ".build" not in path and ".venv" not in path]
    return types | words, members, FileNames(paths)


class FileNames:
    """The repository's files: `name in files` by base name, `files` iterated as "/path"s."""
    def __init__(self, paths):
        self.paths = paths
        self.names = {os.path.basename(path) for path in paths}

    def __contains__(self, name):
        return name in self.names

    def __iter__(self):
        return iter(self.paths)


def is_code(kind, member):
    """A name that reads as code: two CamelCase words or more, or a type with a member."""
    return bool(member) or len(re.findall(r"[A-Z]", kind)) >= 2 and re.search(r"[a-z]", kind) is not None


def stale(text, types, members, files):
    local_types, local_members = set(), set()
    for block in re.findall(r"```.*?```", text, re.S):
        local_types.update(DECLARATION.findall(block))
        local_members.update(MEMBER.findall(block))
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for match in PATH.finditer(line):
            relative = match.group(1)
            if relative.startswith("DIR/") or relative in EXTERNAL_PATHS:
                continue  # a data directory's file, or another project's
            if relative.startswith("../") and os.path.exists(os.path.join(ROOT, relative[3:])):
                continue  # from docs/, a file at the root
            if not any(path.endswith("/" + relative) for path in files):
                found.append((number, relative))
        for match in NAME.finditer(line):
            kind, member = match.group(1), match.group(2)[1:]
            if not is_code(kind, member) or kind in EXAMPLES:
                continue
            if member in FILE_SUFFIXES:
                if "%s.%s" % (kind, member) not in files:
                    found.append((number, "%s.%s" % (kind, member)))
                continue
            if kind not in types and kind not in local_types and kind not in PLATFORM:
                found.append((number, kind + ("." + member if member else "")))
            elif member and kind not in PLATFORM and member not in members.get(kind, set()) and member not in local_members:
                found.append((number, "%s.%s" % (kind, member)))
    return found


# Where the app's half's version is written beside VERSION: (file, pattern of the version).
VERSIONED = [
    ("docs/client.md", r'\.package\(url: "[^"]+", from: "([^"]+)"\)'),
    ("README.md", r'\.package\(url: "[^"]+", from: "([^"]+)"\)'),
    ("waymark-android/build.gradle.kts", r'^version = "([^"]+)"'),
    ("docs/android.md", r'dev\.waymark:waymark-android:([0-9][^`"\s)]*)'),
]


def check_versions(root):
    version = open(os.path.join(root, "VERSION"), encoding="utf-8").read().strip()
    failures, seen = [], 0
    for path, pattern in VERSIONED:
        text = open(os.path.join(root, path), encoding="utf-8").read()
        for match in re.finditer(pattern, text, re.M):
            seen += 1
            if match.group(1) != version:
                failures.append("%s: says version %s, VERSION says %s" % (path, match.group(1), version))
    if seen < 3:
        failures.append("the package lines and coordinates that name the version were not found (%d of them)" % seen)
    return version, seen, failures


def main():
    global ROOT
    root = ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    types, members, files = known_names(root)
    planted = stale("The look reads `EvidenceNetwork.peer` and `Counts.noSuchMember`, beside `Counts.batches`, from "
                    "`Telemetry/Gone.swift` beside `Telemetry/Frame.swift`.", types, members, files)
    if [name for _, name in planted] != ["Telemetry/Gone.swift", "EvidenceNetwork.peer", "Counts.noSuchMember"]:
        print("check-docs: FAIL: planted stale names were not caught as they should be: %s" % planted, file=sys.stderr)
        sys.exit(1)
    documents = [os.path.join(root, "ARCHITECTURE.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    failures, checked = [], 0
    for path in documents:
        text = open(path, encoding="utf-8").read()
        checked += sum(1 for line in text.splitlines() for match in NAME.finditer(line) if is_code(match.group(1), match.group(2)[1:]))
        failures += ["%s:%d: `%s` is named but no longer exists" % (os.path.relpath(path, root), number, name)
                     for number, name in stale(text, types, members, files)]
    # Every picture a document shows is in the repository.
    for path in documents:
        for number, line in enumerate(open(path, encoding="utf-8"), 1):
            for image in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", line):
                if not os.path.exists(os.path.join(os.path.dirname(path), image)):
                    failures.append("%s:%d: shows %s, which is not there" % (os.path.relpath(path, root), number, image))
    # The README's headline figures are quotes of docs/performance.md's latest runs: each
    # row's measured figure is in that table, with the same date (a figure lives in one place).
    headline = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    latest = open(os.path.join(root, "docs", "performance.md"), encoding="utf-8").read()
    latest = latest[latest.find("## Latest runs"):]
    latest = latest[:latest.find("\n## ", 3)] if "\n## " in latest[3:] else latest
    quoted = 0
    if "## Headline figures" in headline:
        table = headline[headline.index("## Headline figures"):].split("\n## ")[0]
        for line in table.splitlines():
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if len(cells) < 5 or cells[0] in ("figure", "") or set(cells[0]) <= set("-"):
                continue
            quoted += 1
            if cells[1] not in latest or any(part.strip() not in latest for part in cells[-1].split(",")):
                failures.append("README.md: the headline figure %r (%s, %s) is not in docs/performance.md's latest runs" % (cells[0], cells[1], cells[-1]))
    if quoted < 4:
        failures.append("README.md: the headline figures were not found (%d rows)" % quoted)
    version, versioned, version_failures = check_versions(root)
    if version_failures:
        print("check-docs: the app's half's version is not the same everywhere:", file=sys.stderr)
        for failure in version_failures:
            print("  " + failure, file=sys.stderr)
        sys.exit(1)
    if failures:
        print("check-docs: the documents disagree with the repository (names the code no longer has, pictures, quoted figures):", file=sys.stderr)
        for failure in failures:
            print("  " + failure, file=sys.stderr)
        sys.exit(1)
    print("check-docs: %d names of code in %d documents all exist (a planted stale name is caught); "
          "version %s in %d package lines and coordinates" % (checked, len(documents), version, versioned))


if __name__ == "__main__":
    main()
