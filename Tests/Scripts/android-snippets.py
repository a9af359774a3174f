#!/usr/bin/env python3
"""docs/android.md's Kotlin snippets are the compiled code of
waymark-android/src/snippets/kotlin/Snippets.kt, both ways: each `// doc:begin NAME` …
`// doc:end` region is a ```kotlin block of the page, character for character, and each
```kotlin block of the page is a region — except the Gradle lines (a block that begins
`// settings.gradle.kts`), which are the app's build files, not Kotlin sources. `build.sh
snippets` then compiles the regions with Kotlin 2 against stand-ins for the Android SDK and
runs them. A changed character on either side, planted first, must be caught.

    python3 Tests/Scripts/android-snippets.py [repository]
"""
import os
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))


def blocks(markdown):
    found, current = [], None
    for line in markdown.split("\n"):
        if current is None and line == "```kotlin":
            current = []
        elif current is not None and line == "```":
            found.append("\n".join(current) + "\n")
            current = None
        elif current is not None:
            current.append(line)
    return found


def regions(source):
    found, name, lines = {}, None, []
    for line in source.split("\n"):
        if line.startswith("// doc:begin "):
            name, lines = line[len("// doc:begin "):], []
        elif line == "// doc:end" and name is not None:
            found[name] = "\n".join(lines) + "\n"
            name = None
        elif name is not None:
            lines.append(line)
    return found


def mismatches(page, source):
    page_blocks = [block for block in blocks(page) if not block.startswith("// settings.gradle.kts")]
    code = regions(source)
    problems = [f"the region {name} is not on the page as it compiles" for name, region in sorted(code.items()) if region not in page_blocks]
    problems += ["a Kotlin block of the page is compiled nowhere:\n" + block for block in page_blocks if block not in code.values()]
    return problems, len(page_blocks), len(code)


def main():
    page = open(os.path.join(ROOT, "docs", "android.md"), encoding="utf-8").read()
    source = open(os.path.join(ROOT, "waymark-android", "src", "snippets", "kotlin", "Snippets.kt"), encoding="utf-8").read()
    planted, _, _ = mismatches(page.replace("class OpenInBrowser(", "class OpenInBrowsr(", 1), source)
    if len(planted) != 2:
        sys.exit(f"android-snippets: a changed character on the page was not caught ({planted})")
    problems, on_page, compiled = mismatches(page, source)
    if problems or compiled < 3:
        for problem in problems:
            print("android-snippets: " + problem, file=sys.stderr)
        sys.exit(f"android-snippets: {len(problems)} mismatches ({compiled} regions)")
    print(f"android-snippets: {on_page} Kotlin blocks of docs/android.md are the {compiled} compiled regions of Snippets.kt (a planted change is caught)")


if __name__ == "__main__":
    main()
