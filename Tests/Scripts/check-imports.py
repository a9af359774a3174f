#!/usr/bin/env python3
"""The libraries an app embeds (RouteEngine, WaymarkClient) import Foundation at most.

Reads the package's own description (`swift package describe --type json`), takes the
targets those products are built from (the products' targets and every target they depend
on, transitively), and fails if that set holds any target but the products' own and
CivilDate (the one pure module below the engine), if any of them depends on a system
library or a product of another package, or if a source file imports a module other than
Foundation, those targets, or FoundationNetworking inside `#if canImport(FoundationNetworking)`
(where URLSession lives on Linux). Glibc, Dispatch, Synchronization, UIKit, and the
server's own modules fail the check.

Off Linux (and on Linux with WAYMARK_PACKAGE=client) the package declares the app's half
alone: these libraries, WaymarkObservation, LibraryTestSupport and their tests
(RouteEngineTests, WaymarkClientTests), nothing of the server, so an app adding the
repository sees no target that cannot build for iOS. Those tests depend on the app's half
alone there, and a file importing anything else does so inside `#if WAYMARK_SERVER` (defined
where the server is declared). The C shim (Sources/CSystemShim) includes a
Linux header only under `#ifdef __linux__`, so a package holding it resolves on macOS.

    python3 Tests/Scripts/check-imports.py [package-dir]
"""
import json
import os
import re
import subprocess
import sys

PRODUCTS = ["RouteEngine", "WaymarkClient"]
ALWAYS = {"Foundation"}
# The only targets the embedded libraries may be built from: their own and CivilDate.
EMBEDDABLE = {"RouteEngine", "WaymarkClient", "CivilDate"}
GUARDED = {"FoundationNetworking": "canImport(FoundationNetworking)"}
IMPORT = re.compile(r"^\s*(?:@[\w(): ]+\s+)*import\s+(?:(?:typealias|struct|class|enum|protocol|let|var|func)\s+)?([A-Za-z_][\w]*)")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    described = json.loads(subprocess.run(["swift", "package", "describe", "--type", "json"], cwd=root,
                                          check=True, capture_output=True, text=True).stdout)
    targets = {target["name"]: target for target in described["targets"]}
    products = {product["name"]: product for product in described["products"]}
    failures = []
    closure, queue = set(), [t for name in PRODUCTS for t in products[name]["targets"]]
    while queue:
        name = queue.pop()
        if name in closure:
            continue
        closure.add(name)
        target = targets[name]
        if target.get("type") not in ("library", None) or target.get("module_type") != "SwiftTarget":
            failures.append(f"{name}: a {target.get('module_type')} ({target.get('type')}) target, not plain Swift")
        if target.get("product_dependencies"):
            failures.append(f"{name}: depends on products of other packages: {target['product_dependencies']}")
        queue += target.get("target_dependencies", [])
    for name in sorted(closure - EMBEDDABLE):
        failures.append(f"{name}: the app's libraries depend on it, but only {', '.join(sorted(EMBEDDABLE))} may be embedded")
    allowed = ALWAYS | (closure & EMBEDDABLE)
    files = 0
    for name in sorted(closure):
        target = targets[name]
        for source in target["sources"]:
            path = os.path.join(root, target["path"], source)
            files += 1
            conditions = []
            with open(path, encoding="utf-8") as handle:
                for number, line in enumerate(handle, 1):
                    stripped = line.strip()
                    if stripped.startswith("#if"):
                        conditions.append(stripped[3:].strip())
                    elif stripped.startswith("#endif"):
                        conditions and conditions.pop()
                    elif stripped.startswith("#else") or stripped.startswith("#elseif"):
                        if conditions:
                            conditions[-1] = "!" + conditions[-1]
                    match = IMPORT.match(line)
                    if not match:
                        continue
                    module = match.group(1)
                    if module in allowed:
                        continue
                    if module in GUARDED and GUARDED[module] in conditions:
                        continue
                    failures.append(f"{target['path']}/{source}:{number}: imports {module}")
    tested, test_files = check_library_tests(root, described, failures)
    shim_files = check_shim(root, failures)
    if failures:
        print("check-imports: the app's libraries may import Foundation at most:", file=sys.stderr)
        for failure in failures:
            print("  " + failure, file=sys.stderr)
        sys.exit(1)
    print(f"check-imports: {', '.join(PRODUCTS)} ({', '.join(sorted(closure))}; {files} files) import Foundation at most; "
          f"their tests ({', '.join(tested)}; {test_files} files) build from them alone, and an app sees only {len(APP_PACKAGE)} targets; "
          f"the C shim ({shim_files} files) includes Linux headers only under __linux__")


# The package as an app sees it (off Linux, or WAYMARK_PACKAGE=client): the app's half alone,
# its tests depending on it alone, and a test file importing anything else (the server,
# Glibc) doing so inside `#if WAYMARK_SERVER`.
LIBRARY_TESTS = ["RouteEngineTests", "WaymarkClientTests"]
TEST_EMBEDDABLE = EMBEDDABLE | {"WaymarkObservation", "LibraryTestSupport"}
APP_PACKAGE = TEST_EMBEDDABLE | set(LIBRARY_TESTS)
APP_PRODUCTS = {"RouteEngine", "WaymarkClient", "WaymarkObservation"}
TEST_MODULES = {"Foundation", "Testing", "Observation"}


def check_library_tests(root, described, failures):
    environment = dict(os.environ, WAYMARK_PACKAGE="client")
    client = json.loads(subprocess.run(["swift", "package", "describe", "--type", "json"], cwd=root, env=environment,
                                       check=True, capture_output=True, text=True).stdout)
    declared = {target["name"]: target for target in client["targets"]}
    if set(declared) != APP_PACKAGE:
        failures.append(f"the package as an app sees it declares {', '.join(sorted(set(declared) - APP_PACKAGE)) or 'nothing more'}"
                        f" beyond the app's half and lacks {', '.join(sorted(APP_PACKAGE - set(declared))) or 'nothing'}")
    if {product["name"] for product in client["products"]} != APP_PRODUCTS:
        failures.append(f"the package as an app sees it has products {sorted(product['name'] for product in client['products'])}, not {sorted(APP_PRODUCTS)}")
    paths = {target["name"]: target for target in described["targets"]}
    files = 0
    for name in LIBRARY_TESTS + ["LibraryTestSupport"]:
        for dependency_name in declared.get(name, {}).get("target_dependencies", []) + declared.get(name, {}).get("product_dependencies", []):
            if dependency_name not in TEST_EMBEDDABLE:
                failures.append(f"{name}: depends on {dependency_name} in the package as an app sees it (only {', '.join(sorted(TEST_EMBEDDABLE))})")
        target = paths[name]
        for source in target["sources"]:
            files += 1
            conditions = []
            with open(os.path.join(root, target["path"], source), encoding="utf-8") as handle:
                for number, line in enumerate(handle, 1):
                    stripped = line.strip()
                    if stripped.startswith("#if"):
                        conditions.append(stripped[3:].strip())
                    elif stripped.startswith("#endif"):
                        conditions and conditions.pop()
                    match = IMPORT.match(line)
                    if not match or match.group(1) in TEST_EMBEDDABLE | TEST_MODULES or "WAYMARK_SERVER" in conditions:
                        continue
                    if match.group(1) in GUARDED and GUARDED[match.group(1)] in conditions:
                        continue
                    failures.append(f"{target['path']}/{source}:{number}: imports {match.group(1)} outside #if WAYMARK_SERVER")
    return LIBRARY_TESTS, files


# Headers any platform has; every other include of the C shim is under `#ifdef __linux__`.
PORTABLE_HEADERS = {"stdint.h", "stddef.h", "string.h", "sys/types.h", "CSystemShim.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')


def check_shim(root, failures):
    files = 0
    shim = os.path.join(root, "Sources", "CSystemShim")
    for folder, _, names in os.walk(shim):
        for file_name in sorted(names):
            if not file_name.endswith((".h", ".c")):
                continue
            files += 1
            path = os.path.join(folder, file_name)
            conditions = []
            with open(path, encoding="utf-8") as handle:
                for number, line in enumerate(handle, 1):
                    stripped = line.strip()
                    if re.match(r"#\s*if", stripped):
                        conditions.append(stripped)
                    elif re.match(r"#\s*endif", stripped):
                        conditions and conditions.pop()
                    match = INCLUDE.match(line)
                    if not match or match.group(1) in PORTABLE_HEADERS:
                        continue
                    if any("__linux__" in condition and not condition.startswith("#ifndef") for condition in conditions):
                        continue
                    failures.append(f"{os.path.relpath(path, root)}:{number}: includes <{match.group(1)}> outside #ifdef __linux__")
    return files


if __name__ == "__main__":
    main()
