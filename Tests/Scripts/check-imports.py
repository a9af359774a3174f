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
    if failures:
        print("check-imports: the app's libraries may import Foundation at most:", file=sys.stderr)
        for failure in failures:
            print("  " + failure, file=sys.stderr)
        sys.exit(1)
    print(f"check-imports: {', '.join(PRODUCTS)} ({', '.join(sorted(closure))}; {files} files) import Foundation at most")


if __name__ == "__main__":
    main()
