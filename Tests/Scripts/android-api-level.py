#!/usr/bin/env python3
"""The Android library uses no platform API above its stated minimum (the `minSdk` line of
waymark-android/api-levels.txt, the one place that figure lives).

Lists every JDK class and member the compiled library refers to (`javap -c -p` over each
class of the jar: method calls, field reads, class references, and the classes named in
descriptors), then looks each up in waymark-android/api-levels.txt, the table of the
Android API level that added it (from developer.android.com's reference, "Added in API
level N"). It fails when a reference is above the minimum, or is not in the table at all:
a new use of the platform is looked up once, by whoever adds it, not guessed at here.

A class named after `guarded` in the table may refer above the minimum: it is loaded only
where the platform has what it uses (its caller checks first; see its comment).

    python3 Tests/Scripts/android-api-level.py waymark-android/build/waymark-android.jar
"""
import os
import re
import subprocess
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLE = os.path.join(ROOT, "waymark-android", "api-levels.txt")
PLATFORM = re.compile(r"^(java|javax)/")
REFERENCE = re.compile(r"// (Method|InterfaceMethod|Field|class) ((?:java|javax)/[\w/$]+)(?:\.(\"?[\w<>$]+\"?):(\S+))?")
DESCRIBED = re.compile(r"L((?:java|javax)/[\w/$]+);")


def read_table():
    levels, guarded, minimum = {}, set(), None
    for number, line in enumerate(open(TABLE), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if parts[0] == "minSdk" and len(parts) == 2 and parts[1].isdigit():
            minimum = int(parts[1])
        elif parts[0] == "guarded" and len(parts) == 2:
            guarded.add(parts[1])
        elif len(parts) == 2 and parts[1].isdigit():
            levels[parts[0]] = int(parts[1])
        else:
            sys.exit(f"android-api-level: {TABLE}:{number}: not 'NAME LEVEL', 'guarded CLASS' or 'minSdk N': {line}")
    if minimum is None:
        sys.exit(f"android-api-level: no 'minSdk N' line in {TABLE}")
    return levels, guarded, minimum


def references(jar):
    """{owning class of the jar: set of references}, each 'java/x/C' or 'java/x/C.member:descriptor'."""
    found = {}
    with tempfile.TemporaryDirectory() as directory:
        with zipfile.ZipFile(jar) as archive:
            names = [name for name in archive.namelist() if name.endswith(".class")]
            archive.extractall(directory, names)
        paths = [os.path.join(directory, name) for name in names]
        for start in range(0, len(paths), 200):
            output = subprocess.run(["javap", "-c", "-p", "-s"] + paths[start:start + 200], check=True,
                                    capture_output=True, text=True).stdout
            owner = None
            for line in output.splitlines():
                # A class's header is the one unindented line naming it (code lines are indented).
                header = re.match(r"^[^\s/].*?\b(?:class|interface)\s+([\w.$]+)", line)
                if header:
                    owner = header.group(1).replace(".", "/")
                    continue
                refs = found.setdefault(owner, set())
                for kind, cls, member, descriptor in REFERENCE.findall(line):
                    refs.add(cls)
                    if member:
                        refs.add(f"{cls}.{member.strip(chr(34))}:{descriptor}")
                for cls in DESCRIBED.findall(line):
                    refs.add(cls)
    return found


def main():
    jar = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "waymark-android", "build", "waymark-android.jar")
    levels, guarded, minimum = read_table()
    failures, used = [], set()
    found = references(jar)
    for owner, refs in sorted(found.items(), key=lambda item: item[0] or ""):
        for ref in sorted(refs):
            # A member is looked up by its own line, else by its class's (all members of an API-1 class alike).
            level = levels.get(ref)
            if level is None and "." in ref:
                level = levels.get(ref.split(".", 1)[0] + ".*")
            if level is None and "." not in ref:
                level = levels.get(ref)
            if level is None:
                failures.append(f"{owner}: {ref} is not in {os.path.relpath(TABLE, ROOT)}: look up the API level that added it")
                continue
            used.add(ref if ref in levels else ref.split(".", 1)[0] + ".*")
            if level > minimum and owner not in guarded:
                failures.append(f"{owner}: {ref} needs API {level}, above minSdk {minimum}")
    for failure in failures:
        print("android-api-level:", failure, file=sys.stderr)
    if failures:
        sys.exit(1)
    print(f"android-api-level: {len(set().union(*found.values()))} references checked against minSdk {minimum}; "
          f"{len(levels)} table entries")


if __name__ == "__main__":
    main()
