#!/usr/bin/env bash
# An app's own package, in a directory of its own, adding this repository as an app team
# would (docs/client.md, "Add the package"), with the manifest as Xcode reads it off Linux
# (WAYMARK_PACKAGE=client: the app's half alone). It must resolve, show the app's three
# products and no server target, build, and run: an empty table resolves nothing, a refresh
# against a closed port fails as a value.
#
#   bash Tests/Scripts/client-package.sh [repository]
set -euo pipefail
root=$(cd "${1:-.}" && pwd)
app=$(mktemp -d)
trap 'rm -rf "$app"' EXIT
identity=$(basename "$root" | tr '[:upper:]' '[:lower:]')
mkdir -p "$app/Sources/StorefrontApp"
cat > "$app/Package.swift" <<SWIFT
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "StorefrontApp",
    platforms: [.iOS(.v16), .macOS(.v13)],
    dependencies: [.package(path: "$root")],
    targets: [.executableTarget(name: "StorefrontApp", dependencies: [.product(name: "WaymarkClient", package: "$identity"),
                                                                       .product(name: "RouteEngine", package: "$identity")])]
)
SWIFT
cat > "$app/Sources/StorefrontApp/main.swift" <<'SWIFT'
import Foundation
import RouteEngine
import WaymarkClient

let cache = FileManager.default.temporaryDirectory.appendingPathComponent("storefront-\(UUID().uuidString)")
let client = ManifestClient(configuration: ManifestClientConfiguration(
    server: URL(string: "http://127.0.0.1:1")!, build: AppBuild(app: "storefront", platform: "ios", version: "5.3.0"),
    cacheDirectory: cache))
let table = await client.currentTable()
let resolution = table.resolve(.url("https://shop.example/p/42"), context: ResolutionContext())
let outcome = await client.refresh()
print("table \(table.origin.rawValue); resolution \(resolution); refresh \(outcome)")
try? FileManager.default.removeItem(at: cache)
SWIFT
export WAYMARK_PACKAGE=client
cd "$app"
swift package resolve >/dev/null
# The repository as the app's package graph holds it: its targets and products.
described=$(cd "$app" && swift package --package-path "$root" describe --type json)
python3 - "$described" <<'PY'
import json, sys
described = json.loads(sys.argv[1])
targets = sorted(t["name"] for t in described["targets"])
products = sorted(p["name"] for p in described["products"])
expected = ["CivilDate", "LibraryTestSupport", "RouteEngine", "RouteEngineTests", "WaymarkClient", "WaymarkClientTests", "WaymarkObservation"]
if targets != expected or products != ["RouteEngine", "WaymarkClient", "WaymarkObservation"]:
    sys.exit(f"client-package: an app sees targets {targets} and products {products}")
print(f"client-package: an app sees {len(targets)} targets ({', '.join(targets)}) and products {', '.join(products)}")
PY
start=$(date +%s)
swift build --product StorefrontApp 2>&1 | tail -3
output=$(swift run --skip-build StorefrontApp)
echo "$output"
case "$output" in
    "table empty; resolution notFound"*"refresh "*) ;;
    *) echo "client-package: unexpected output" >&2; exit 1 ;;
esac
echo "client-package: a separate app package built and ran against the app's half in $(( $(date +%s) - start )) s"
