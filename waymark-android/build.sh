#!/usr/bin/env bash
# Builds the Android library with plain kotlinc and runs its JUnit 5 tests on the JVM.
#   build.sh          compile the library and the tests, run every test (make test-android)
#   build.sh jar      compile the library only: build/waymark-android.jar
#   build.sh bench    compile and run the benchmark (make bench-android)
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
  *) echo "usage: build.sh [test|jar|bench]" >&2; exit 2 ;;
esac
