#!/usr/bin/env bash
# Builds the Android library with plain kotlinc and runs its JUnit 5 tests on the JVM.
#   build.sh          compile the library and the tests, run every test (make test-android)
#   build.sh jar      compile the library only: build/waymark-android.jar
#   build.sh bench    compile and run the benchmark (make bench-android)
#   build.sh snippets MANIFEST  compile docs/android.md's snippets with Kotlin 2 against stand-ins
#                     for the Android SDK, and run them on MANIFEST (make test-android)
#   build.sh kotlin2  compile the library and the tests with a Kotlin 2.x compiler, whose
#                     deprecations that are errors there (toLowerCase(Locale)…) fail it; the
#                     compiler comes from .venv-kotlin2 (Tests/Scripts/python-tools.sh kotlin2)
# Kotlin 1.3 (Debian's kotlin) on Debian's JDK 17; JUnit from Debian's junit5. Installed by
# Tests/Scripts/install-packages.sh, as the Makefile's targets do.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="$here/build"
stdlib=/usr/share/java/kotlin-stdlib.jar
junit=/usr/share/java/junit-platform-console-standalone.jar
mkdir -p "$out"
export JAVA_OPTS="${JAVA_OPTS:-} -Xshare:auto"

compile_library() {
  # Recompile only when a source is newer than the jar.
  if [ ! -f "$out/waymark-android.jar" ] || [ -n "$(find "$here/src/main" -newer "$out/waymark-android.jar" -name '*.kt' | head -1)" ]; then
    rm -f "$out/waymark-android.jar"  # a failed compile must not leave the last good jar to be tested
    kotlinc "$here/src/main/kotlin" -jvm-target 1.8 -d "$out/waymark-android.jar" 2>&1 | grep -v -E '^OpenJDK 64-Bit Server VM warning' || true
    [ -f "$out/waymark-android.jar" ] || { echo "build.sh: the library did not compile" >&2; exit 1; }
  fi
}

compile_tests() {
  if [ ! -f "$out/waymark-android-tests.jar" ] || [ -n "$(find "$here/src" -newer "$out/waymark-android-tests.jar" -name '*.kt' | head -1)" ]; then
    rm -f "$out/waymark-android-tests.jar"
    kotlinc "$here/src/test/kotlin" -jvm-target 1.8 -cp "$out/waymark-android.jar:$junit" -d "$out/waymark-android-tests.jar" 2>&1 \
      | grep -v -E '^OpenJDK 64-Bit Server VM warning' || true
    [ -f "$out/waymark-android-tests.jar" ] || { echo "build.sh: the tests did not compile" >&2; exit 1; }
  fi
}

case "${1:-test}" in
  jar) compile_library ;;
  test)
    compile_library
    compile_tests
    # Every suite under the machine's locale, then under Arabic and Persian ones, whose digits
    # are not ASCII: whatever the library formats must not follow the phone's locale.
    for locale in default ar-EG fa-IR; do
      flags=()
      [ "$locale" = default ] || flags=(-Duser.language="${locale%-*}" -Duser.country="${locale#*-}")
      echo "== JUnit, locale $locale"
      java "${flags[@]}" -Dwaymark.conformance="$root/conformance" -Dwaymark.root="$root" -jar "$junit" --disable-banner --details=summary \
        --fail-if-no-tests -cp "$out/waymark-android-tests.jar:$out/waymark-android.jar:$stdlib" --scan-classpath "$out/waymark-android-tests.jar"
    done
    ;;
  bench)
    compile_library
    compile_tests
    java -Dwaymark.root="$root" -cp "$out/waymark-android-tests.jar:$out/waymark-android.jar:$stdlib" dev.waymark.bench.BenchKt ${2:-}
    ;;
  kotlin2)
    # The sources are kept to what Kotlin 1.3 and 2.x both accept: Debian's compiler checks
    # the first, this the second (its newest language and API version, the strictest: an API
    # deprecated as an error stays one). Warnings are counted (Char.toInt(), whose replacement
    # Char.code Kotlin 1.3 lacks); errors fail.
    jars=$(ls -d "$root"/.venv-kotlin2/lib/python*/site-packages/run_kotlin_kernel/jars 2>/dev/null | head -1)
    [ -n "$jars" ] || { echo "build.sh: no Kotlin 2 compiler; run Tests/Scripts/python-tools.sh kotlin2" >&2; exit 2; }
    compiler=$(ls "$jars"/kotlin-jupyter-kernel-*-all.jar)
    stdlib2=$(ls "$jars"/kotlin-stdlib-2*.jar)
    k2=(java -cp "$compiler:$stdlib2" org.jetbrains.kotlin.cli.jvm.K2JVMCompiler -no-reflect -no-stdlib -jvm-target 1.8)
    rm -rf "$out/kotlin2" && mkdir -p "$out/kotlin2"
    # The library and its tests in one run of the compiler (one JVM warmed once: 34 s where
    # two runs took 52 s here); the library's own errors and warnings are those naming src/main.
    echo "== Kotlin $(unzip -p "$compiler" META-INF/compiler.version): the library and its tests"
    "${k2[@]}" -classpath "$stdlib2:$junit" -d "$out/kotlin2/classes" "$here/src/main/kotlin" "$here/src/test/kotlin" 2>&1 \
      | grep -v -E '^OpenJDK 64-Bit Server VM warning' > "$out/kotlin2/compile.log" || true
    grep -E "src/main/[^:]*:[0-9]+:[0-9]+: (error|warning):" "$out/kotlin2/compile.log" > "$out/kotlin2/main.log" || true
    grep -E "src/test/[^:]*:[0-9]+:[0-9]+: (error|warning):" "$out/kotlin2/compile.log" > "$out/kotlin2/test.log" || true
    if [ ! -d "$out/kotlin2/classes/dev" ] || grep -q 'error:' "$out/kotlin2/compile.log"; then
      cat "$out/kotlin2/compile.log" >&2
      if grep -q 'error:' "$out/kotlin2/main.log"; then echo "build.sh: the library does not compile under Kotlin 2" >&2
      elif grep -q 'error:' "$out/kotlin2/test.log"; then echo "build.sh: the tests do not compile under Kotlin 2" >&2
      else echo "build.sh: the Kotlin 2 compiler failed on neither tree's sources (its whole log is above)" >&2; fi
      exit 1
    fi
    echo "build.sh: library and tests compile under Kotlin 2 ($(grep -c 'warning:' "$out/kotlin2/main.log") warnings in the library, $(grep -c 'warning:' "$out/kotlin2/test.log") in the tests)"
    ;;
  snippets)
    # docs/android.md's Kotlin snippets (src/snippets/kotlin/Snippets.kt, held to the page by
    # Tests/Scripts/android-snippets.py) compiled by Kotlin 2, as an app's Gradle build would,
    # against the library and stand-ins for the Android SDK and kotlinx (src/snippets/standins),
    # then run on the storefront's manifest (the one argument).
    [ -n "${2:-}" ] || { echo "usage: build.sh snippets MANIFEST.json" >&2; exit 2; }
    compile_library
    jars=$(ls -d "$root"/.venv-kotlin2/lib/python*/site-packages/run_kotlin_kernel/jars 2>/dev/null | head -1)
    [ -n "$jars" ] || { echo "build.sh: no Kotlin 2 compiler; run Tests/Scripts/python-tools.sh kotlin2" >&2; exit 2; }
    compiler=$(ls "$jars"/kotlin-jupyter-kernel-*-all.jar)
    stdlib2=$(ls "$jars"/kotlin-stdlib-2*.jar)
    rm -rf "$out/snippets" && mkdir -p "$out/snippets"
    java -cp "$compiler:$stdlib2" org.jetbrains.kotlin.cli.jvm.K2JVMCompiler -no-reflect -no-stdlib -jvm-target 1.8 \
      -classpath "$stdlib2:$out/waymark-android.jar" -d "$out/snippets/classes" "$here/src/snippets/standins" "$here/src/snippets/kotlin" 2>&1 \
      | grep -v -E '^OpenJDK 64-Bit Server VM warning' > "$out/snippets/compile.log" || true
    if grep -q 'error:' "$out/snippets/compile.log" || [ ! -d "$out/snippets/classes/com" ]; then
      cat "$out/snippets/compile.log" >&2; echo "build.sh: docs/android.md's snippets do not compile" >&2; exit 1
    fi
    java -cp "$out/snippets/classes:$out/waymark-android.jar:$stdlib2" com.example.storefront.RunKt "$2"
    ;;
  *) echo "usage: build.sh [test|jar|bench|kotlin2|snippets MANIFEST]" >&2; exit 2 ;;
esac
