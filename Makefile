# Waymark — the two commands a fresh Debian machine with the Swift toolchain needs:
#   make run    build and start Waymark on its embedded default (the storefront example)
#   make test   build and run every test
# Everything beyond the toolchain is installed here, when missing.

SWIFT      ?= swift
EXAMPLE    := manifests/storefront
SCHEMAS    := --schema $(EXAMPLE)/schema-ios-5.2.0.json --schema $(EXAMPLE)/schema-ios-5.3.0.json
BIN        := .build/debug/waymark
RELEASE    := .build/release

.PHONY: console-screenshots all help check-docs check-readme build builds tools run test test-beside-builds test-one-at-a-time check-imports check-client-package test-client test-unit test-live test-crash test-followers test-rollout test-guard test-qr test-import test-postgres test-landing check-deploy test-api test-dashboard test-console test-links test-android bench-android fuzz-ci check-example bench bench-client bench-guard bench-database bench-http bench-publish bench-telemetry bench-events count-instructions fuzz deps toolchain clean

# The default: the debug build.
all: build

# Lists the targets, each with the first line of the comment above it.
help:
	@awk '/^# / && !c { c = substr($$0, 3) } /^$$/ { c = "" } /^[a-z][a-z0-9-]*:/ { sub(/:.*/, "", $$1); printf "  %-22s %s\n", $$1, c; c = "" }' Makefile

# Fails with where to get it when the Swift toolchain is missing.
toolchain:
	@command -v $(SWIFT) >/dev/null || { echo "The Swift toolchain (swift 6) is required: https://www.swift.org/install/linux/" >&2; exit 2; }

# Beyond the toolchain: libcurl's headers (the link checks), found through pkg-config.
deps: toolchain
	@bash Tests/Scripts/install-packages.sh pkg-config=pkg-config curl-config=libcurl4-openssl-dev /usr/include/postgresql/libpq-fe.h=libpq-dev

# The debug build: the daemon and CLI (.build/debug/waymark), the simulator, the tools.
build: deps
	$(SWIFT) build

# The daemon on its embedded default: ./data (seeded from the storefront example on first
# start, when an admin token is printed once), loopback port 8080. Ctrl-C stops it.
# Override with e.g. `make run SERVE_ARGS='--port 9000 --public-reads'`.
SERVE_ARGS ?=
run: build
	$(BIN) serve --data-dir data $(SERVE_ARGS)

# Every check, in two parts. First, two at a time beside the builds (debug, release, tests:
# make -j2, each target's output shown whole when it ends), the tools installed and the
# checks none of whose figures depend on a busy machine and whose deadlines are many times
# what they need (the crash test's 10 s for overdue schedules, rollout-e2e's 15-20 s for a
# look, nginx's 12 s for a publish); then one at a time, on a machine left to them, every
# check that measures or times anything.
# Unit tests run last, so their summary closes the output.
# Each part's minutes, and each one-at-a-time check's seconds, are printed as it ends
# ("make test: … took N s"), so where the time goes is in every CI log.
test:
	@start=$$(date +%s); $(MAKE) -j2 --output-sync=target test-beside-builds && \
	  echo "make test: the first part (builds and the checks beside them) took $$(( $$(date +%s) - start )) s"
	@start=$$(date +%s); $(MAKE) -j1 test-one-at-a-time && \
	  echo "make test: the second part (one at a time) took $$(( $$(date +%s) - start )) s"

# make test's first part, two at a time beside the builds (above).
test-beside-builds: builds tools check-imports check-client-package check-docs check-readme check-example test-client test-qr test-import test-api test-android fuzz-ci test-crash test-rollout check-deploy
# make test's second part, one at a time (above), each check timed.
ONE_AT_A_TIME = test-links test-live test-disk-full test-hostile test-memory test-followers test-guard test-landing test-dashboard test-console test-unit test-postgres
test-one-at-a-time:
	@for check in $(ONE_AT_A_TIME); do start=$$(date +%s); $(MAKE) $$check || exit 1; \
	  echo "make test: $$check took $$(( $$(date +%s) - start )) s"; done

# The three builds the checks run, one after the other (SwiftPM builds one at a time in .build).
builds: build
	$(SWIFT) build -c release --product waymark
	$(SWIFT) build --build-tests

# What the checks install for themselves when missing, installed at once: the Debian
# packages of the checks that run one at a time (fetched while the builds run) and the PyPI
# tools (Tests/Scripts/python-tools.sh).
tools: deps
	bash Tests/Scripts/install-packages.sh python3=python3 openssl=openssl curl=curl wrk=wrk h2load=nghttp2-client \
	  slowhttptest=slowhttptest ss=iproute2 promtool=prometheus nginx=nginx systemd-analyze=systemd \
	  chromium=chromium chromedriver=chromium-driver $(ANDROID_PACKAGES) zbarimg=zbar-tools rsvg-convert=librsvg2-bin
	bash Tests/Scripts/python-tools.sh schemathesis selenium deploy

# The libraries an app embeds (RouteEngine, WaymarkClient, and the targets they are built
# from) import Foundation at most: no Glibc, Dispatch, Synchronization or UIKit; their tests
# need nothing of the server off Linux, and the C shim's Linux headers are under __linux__.
check-imports: toolchain
	bash Tests/Scripts/install-packages.sh python3=python3
	python3 Tests/Scripts/check-imports.py

# The runnable example: waymark-simulator plays an app (the WaymarkClient loop) against a
# live daemon; its plans, the login gate and the server's telemetry counts are checked.
test-client: build
	bash Tests/Scripts/install-packages.sh python3=python3
	python3 Tests/Scripts/simulator-check.py $(BIN) .build/debug/waymark-simulator

# The Swift Testing suites (FILTER=regex: only the suites and tests whose names match).
# The link-check suites serve HTTPS from loopback with Python and an openssl-made certificate.
FILTER ?=
test-unit: deps
	bash Tests/Scripts/install-packages.sh python3=python3 openssl=openssl
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --disable-xctest $(if $(FILTER),--filter '$(FILTER)')

# The PostgreSQL client (Sources/PostgresClient, on the system's libpq) and the database store
# (Sources/DatabaseStore: migrations, the medium, the watcher; the store's suite on both media)
# against a PostgreSQL of the tests' own: installed from Debian when missing, a cluster in a
# temporary directory on a Unix socket (Tests/Scripts/postgres.sh), removed after. Fails if
# any of its tests failed or was skipped (they are skipped only without the cluster). Then
# three `serve --database` nodes on one database: changes on any node on every node's
# manifest within the bound, and 60 SIGKILLs during changes losing nothing acknowledged.
test-postgres: deps
	$(SWIFT) build --build-tests
	$(SWIFT) build
	bash Tests/Scripts/postgres.sh python3 Tests/Scripts/postgres-nodes.py $(BIN)
	bash Tests/Scripts/postgres.sh bash -c '$(SWIFT) test --skip-build --disable-xctest --filter PostgresClientTests > .build/postgres-tests.log 2>&1; status=$$?; \
	  sed "s/\x1b\[[0-9;]*m//g" .build/postgres-tests.log > .build/postgres-tests.txt; grep -E "✘|Suite|Test run" .build/postgres-tests.txt; \
	  [ $$status = 0 ] && grep -q "Test run with .* passed" .build/postgres-tests.txt && ! grep -q " skipped" .build/postgres-tests.txt'

# The HTTP server with real clients (curl, Python, wrk, h2load), then slow clients
# (slowhttptest). Installs the clients from Debian when missing.
test-live: build
	bash Tests/Scripts/http-live.sh
	bash Tests/Scripts/slow-clients.sh

# Publishes, registers schemas, schedules publishes and runs rollouts (controls, and guard
# trips on failing telemetry) while the daemon is SIGKILLed at random moments (fixed seed),
# 60 times; every acknowledged change must survive each restart, a fired schedule must name
# its own revision, none past its time stays pending, and the rollout is at or past its last
# acknowledged state, whole, and served to each cohort as its state says.
CRASH_KILLS ?= 60
test-crash: build
	bash Tests/Scripts/install-packages.sh python3=python3
	python3 Tests/Scripts/crash-test.py $(BIN) $(CRASH_KILLS)

# On a 32 MiB tmpfs it mounts (skipped where mounting is not allowed): with the disk full,
# publish, schemas and tokens are refused whole (507) and telemetry 503 with /readyz
# degraded; once space is freed telemetry repairs itself and every change succeeds.
test-disk-full: build
	bash Tests/Scripts/install-packages.sh python3=python3
	python3 Tests/Scripts/disk-full.py $(BIN)

ONLY ?=

# Each attack of the "Hostile load" issues against a release daemon on loopback: anonymous
# 16 MiB bodies, a refusal flood during a 5,000-route publish (manifest p50/p99 printed),
# the audit log's growth, a phone's token against the cell cap and a rate, silent
# connections against the per-peer cap and the connection limit, dot-only versions; heads
# without bodies, a two-loop rate limit, a QR flood across rollouts and a scheduled publish,
# slow QR readers, big notes and schedules, request ids, Host ports, landings past a window
# edge, refusals from many addresses, the costliest documents from six tokens (issue 33);
# prints each attack's seconds. About four minutes.
# ONLY='name …' runs only those attacks, each on a daemon of its own.
test-hostile: deps
	bash Tests/Scripts/install-packages.sh python3=python3 ss=iproute2
	$(SWIFT) build -c release --product waymark
	python3 Tests/Scripts/hostile.py $(RELEASE)/waymark $(ONLY)

# RSS of a release daemon with 10,000 routes, 20 builds' manifests fetched and 1,000 idle
# connections: under 64 MB; prints each step and a build view's cost beside its manifest.
test-memory: deps
	bash Tests/Scripts/install-packages.sh python3=python3
	$(SWIFT) build -c release --product waymark
	python3 Tests/Scripts/memory.py $(RELEASE)/waymark 64

# A primary and two followers on loopback: publishes reach the followers within the poll
# interval, followers keep serving without the primary, and telemetry posted to them is
# counted exactly once on the primary while one follower is SIGKILLed (fixed seed).
FOLLOWER_KILLS ?= 8
test-followers: build
	bash Tests/Scripts/install-packages.sh python3=python3
	python3 Tests/Scripts/followers-test.py $(BIN) $(FOLLOWER_KILLS)

# Staged rollouts and scheduled publishing on a live daemon whose clock the test moves
# (serve --clock-file): 400 simulated installs in every cohort fetch manifests and post
# telemetry each round; a healthy candidate walks 1 -> 10 -> 50 -> 100 % and becomes current,
# one that breaks a route on one build is stopped at 1 %; pause, resume, abort, supersede,
# promote; a scheduled publish fires, one that stopped validating is skipped.
test-rollout: build
	bash Tests/Scripts/install-packages.sh python3=python3
	python3 Tests/Scripts/rollout-e2e.py $(BIN)

# The attacks on the telemetry the guard acts on, against a live release daemon with a moved
# clock: 30,000 simulated installs on 200 loopback networks walk a healthy candidate to 100 %
# while one address lands links as an iPhone, forges failures, floods old hours and shapes;
# a broken candidate trips at 1 % under forged successes; the Swift p-value table against
# the Python reference (Tests/Scripts/guard-reference.py).
test-guard: deps
	bash Tests/Scripts/install-packages.sh python3=python3
	$(SWIFT) build -c release --product waymark
	python3 Tests/Scripts/guard-attacks.py $(RELEASE)/waymark

# QR codes from a live daemon read back by zbarimg (Debian's zbar-tools; SVGs rasterised by
# librsvg's rsvg-convert, both installed when missing): every level, every version up to 40
# at its full length, the SVG and `waymark qr`, damaged symbols within each level's budget.
test-qr: build
	bash Tests/Scripts/install-packages.sh python3=python3 zbarimg=zbar-tools rsvg-convert=librsvg2-bin
	python3 Tests/Scripts/qr-check.py $(BIN)

# Moving in and changing one route at a time, on a live daemon with the CLI and plain HTTP:
# the 543-link Takeout fixture (Tests/Scripts/takeout-fixture.py) imported row by row as it
# expects, every imported link resolving on three builds as its deep link did, published and
# landed, imported again without a change; a 20 MB export; 50 concurrent PUTs from 10 tokens
# racing whole publishes, none lost or applied twice; invalid PUTs, DELETE, the batch, the CLI.
test-import: build
	bash Tests/Scripts/install-packages.sh python3=python3
	python3 Tests/Scripts/import-check.py $(BIN)

# Link landing on a live release daemon with curl as the browser (iPhone, Android, desktop): every
# branch, HEAD, an expired campaign, undeclared hosts, hostile paths and 3,000 random ones;
# every Location must be a declared address, and the web telemetry exact; then a flood of
# random unknown links from wrk leaves RSS flat and the real shapes on top.
test-landing: deps
	bash Tests/Scripts/install-packages.sh python3=python3 curl=curl wrk=wrk
	$(SWIFT) build -c release --product waymark
	python3 Tests/Scripts/landing-check.py $(RELEASE)/waymark

# deploy/ and the Dockerfile: hadolint, checkov, systemd-analyze verify, promtool (config,
# rules, rule tests), metric names against a live /metrics, nginx -t and a real caching run.
check-deploy: build
	bash Tests/Scripts/check-deploy.sh $(BIN)

# Schemathesis (PyPI, in .venv) against a live daemon: every operation of docs/openapi.yaml,
# every check, a fixed seed; must report 0 failures.
test-api: build
	bash Tests/Scripts/api-fuzz.sh $(BIN)

# The marketing console in headless Chromium driven by Selenium (Debian's chromium and
# chromium-driver, Selenium from PyPI in .venv-selenium, installed when missing), as a person would
# use it: log in, compose, check, preview, publish, a second browser publishing first,
# rebase, rollback; the page's policy and where the token went. Screenshots in .build/console/.
test-console: build
	bash Tests/Scripts/console-check.sh $(BIN) .build/console
	SE_OFFLINE=true .venv-selenium/bin/python Tests/Scripts/handoff-check.py $(BIN)

# The console's screenshots in docs/console.md, taken again by test-console's browser.
CONSOLE_SHOTS = 2-routes:routes 3-type-error:type-error 4-conflict:conflict 5-preview:preview 12-impact-warning:impact \
  8-refused:rebase 9-conflict-on-rebase:rebase-conflict 7-history:history 10-rollback-confirm:rollback \
  12-performance:performance 13-performance-compare:compare
console-screenshots: test-console
	mkdir -p docs/console
	for pair in $(CONSOLE_SHOTS); do cp .build/console/$${pair%%:*}.png docs/console/$${pair##*:}.png; done
	@echo "console-screenshots: $(words $(CONSOLE_SHOTS)) screenshots copied to docs/console/"

# GET /dashboard in headless Chromium (Debian's chromium, installed when missing): the
# figures it draws equal the telemetry posted, it refreshes itself, it asks for a token;
# leaves a screenshot in .build/dashboard.png.
test-dashboard: build
	bash Tests/Scripts/install-packages.sh python3=python3 chromium=chromium
	python3 Tests/Scripts/dashboard-check.py $(BIN) .build/dashboard.png

# A short libFuzzer run with AddressSanitizer on every CI run.

# A separate app package adds this repository as docs/client.md says and sees the app's half
# alone (the manifest as Xcode reads it off Linux: three products, no server target), then
# builds and runs it (Tests/Scripts/client-package.sh).
check-client-package: toolchain
	bash Tests/Scripts/install-packages.sh python3=python3
	bash Tests/Scripts/client-package.sh .

# 30 seconds of each libFuzzer target with AddressSanitizer (make fuzz), as make test runs it.
fuzz-ci:
	$(MAKE) fuzz FUZZ_SECONDS=30

# Every type or member ARCHITECTURE.md and docs/ name in backticks still exists in the code
# (a planted stale name must be caught first).
check-docs:
	bash Tests/Scripts/install-packages.sh python3=python3
	python3 Tests/Scripts/check-docs.py

# The README's quick start as a newcomer pastes it, against make run's daemon (Tests/Scripts/readme.py).
check-readme: build
	bash Tests/Scripts/install-packages.sh python3=python3 curl=curl
	python3 Tests/Scripts/readme.py $(BIN)

# The shipped example must stay valid: `waymark validate` exits 0 on it.
check-example: build
	$(BIN) validate $(SCHEMAS) $(EXAMPLE)/routes.json >/dev/null
	@echo "check-example: $(EXAMPLE) is valid"

# `waymark validate --check-links` on the example against its sites served over HTTPS from
# loopback (Tests/Fixtures/storefront-sites): no findings and the time taken (under 2 s),
# a missing apple-app-site-association reported, loopback refused without --allow-address.
test-links: build
	bash Tests/Scripts/install-packages.sh python3=python3 openssl=openssl
	bash Tests/Scripts/link-checks.sh $(BIN)

# The Android library (waymark-android/, Kotlin 1.3 on JDK 17, JUnit 5, all from Debian):
# every row of every conformance/ file, read from conformance/ itself, under the machine's
# locale, ar-EG and fa-IR; no platform API above its minimum (android-api-level.py); the
# library and its tests compiled by a Kotlin 2.x compiler too (build.sh kotlin2); the guide's
# Kotlin snippets, held to the page (android-snippets.py), compiled by Kotlin 2 against
# stand-ins for the Android SDK and run on the storefront (build.sh snippets); then the
# differential test: 20,000 generated links (hostile mutations included) resolved by the
# Swift CLI and by the JVM library, every result identical; then the library's whole loop
# against a live daemon (manifest 200 then 304, the login gate, a telemetry batch whose
# 202 is lost sent again and counted once).
ANDROID_PACKAGES = kotlinc=kotlin java=openjdk-17-jdk-headless /usr/share/java/junit-platform-console-standalone.jar=junit5
ANDROID_CLASSPATH = waymark-android/build/waymark-android-tests.jar:waymark-android/build/waymark-android.jar:/usr/share/java/kotlin-stdlib.jar
test-android: build
	bash Tests/Scripts/install-packages.sh python3=python3 $(ANDROID_PACKAGES)
	bash waymark-android/build.sh test
	python3 Tests/Scripts/android-api-level.py waymark-android/build/waymark-android.jar
	bash Tests/Scripts/python-tools.sh kotlin2
	bash waymark-android/build.sh kotlin2
	python3 Tests/Scripts/android-snippets.py
	$(BIN) manifest --schema $(EXAMPLE)/schema-ios-5.3.0.json --routes $(EXAMPLE)/routes.json --output waymark-android/build/storefront-manifest.json
	bash waymark-android/build.sh snippets waymark-android/build/storefront-manifest.json
	python3 Tests/Scripts/android-differential.py $(BIN) $(ANDROID_CLASSPATH)
	python3 Tests/Scripts/android-live.py $(BIN) $(ANDROID_CLASSPATH)

# The Android library on the 10,000-route manifest of bench-client: decode time (target
# < 200 ms) and resolutions per second beside the Swift engine's (make bench's figure, run
# here first; target: within 3×).
bench-android: deps
	bash Tests/Scripts/install-packages.sh $(ANDROID_PACKAGES)
	$(SWIFT) build -c release --product RouteEngineBench
	rate=$$($(RELEASE)/RouteEngineBench | tee /dev/stderr | sed -n 's/.*compiled trie: *\([0-9,]*\) resolutions.*/\1/p'); \
	  bash waymark-android/build.sh bench "$$rate"

# Resolutions per second on one core for 10,000 generated routes, against a linear scan.
bench: deps
	$(SWIFT) build -c release --product RouteEngineBench
	$(RELEASE)/RouteEngineBench

# The app's half on a 10,000-route manifest: decode-and-build time, dispatch-to-plan latency
# (median, p99) and the table's memory, each beside a peer (targets: < 150 ms, < 20 µs, < 20 MB).
bench-client: deps
	$(SWIFT) build -c release --product ClientBench
	$(RELEASE)/ClientBench

# Waymark's HTTP server against nginx on the same ~40 KB file: req/s, p50, p99, ratios.
# Installs nginx and wrk from Debian when missing. Two rigs, each with nginx beside it in
# the same run: every pair with both servers pinned and wrk on two threads, then the
# manifest pair with nothing pinned and one wrk thread (the layout a shared host gives).
# A node on PostgreSQL beside one on a data directory, serving the manifest (Tests/Scripts/bench-database.sh).
bench-database: deps
	$(SWIFT) build -c release --product waymark
	bash Tests/Scripts/postgres.sh bash Tests/Scripts/bench-database.sh

bench-http: deps
	bash Tests/Scripts/bench-http.sh
	BENCH_PIN=0 BENCH_WRK_THREADS=1 BENCH_ONLY=manifest BENCH_TARGET=1.2 bash Tests/Scripts/bench-http.sh

# Publishing a 10,000-route document (validation included) to a live release daemon,
# beside the dry run of the same document.
bench-publish: deps
	bash Tests/Scripts/bench-publish.sh

# The rollout guard on simulated fleets, through the code the daemon runs: 50 healthy
# candidates (how many trip: the false-trip rate) and a route broken on one build at 40, 20
# and 8 % against its 3 % baseline from each step (steps and resolutions to trip).
GUARD_RUNS ?= 50
bench-guard: deps
	$(SWIFT) build -c release --product GuardBench
	$(RELEASE)/GuardBench $(GUARD_RUNS)
	$(RELEASE)/GuardBench --detectable

# wrk posting telemetry batches (durable) beside JSONDecoder on the same batches.
bench-telemetry: deps
	bash Tests/Scripts/bench-telemetry.sh

# Instructions per request (manifest 304 and 200, a telemetry batch, the batch parser
# alone) under callgrind:
# repeatable on a busy machine, for judging a change to the request path.
count-instructions: deps
	bash Tests/Scripts/count-instructions.sh

# Why epoll: a thread per core with epoll against Dispatch read sources, same echo workload.
bench-events: deps
	$(SWIFT) build -c release --product EventDeliveryBench
	$(RELEASE)/EventDeliveryBench

# libFuzzer with AddressSanitizer, for FUZZ_SECONDS each (default 60): HTTPCore's decoders
# (HTTPFuzz) and, at the same time on the other core, the telemetry batch parser (TelemetryFuzz, the body of POST
# /v1/telemetry). One --sanitize for SwiftPM plus -sanitize=fuzzer,address for swiftc: two
# --sanitize flags silently drop coverage. A separate scratch path keeps the normal build
# untouched.
FUZZ_SECONDS ?= 60
FUZZ_BUILD = $(SWIFT) build --scratch-path .build-fuzz --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
fuzz: deps
	$(FUZZ_BUILD) --product HTTPFuzz
	$(FUZZ_BUILD) --product TelemetryFuzz
	mkdir -p .build-fuzz/corpus .build-fuzz/telemetry-corpus
	cp Tests/Fuzz/http-corpus/* .build-fuzz/corpus/
	cp Tests/Fuzz/telemetry-corpus/* .build-fuzz/telemetry-corpus/
	# Both at once, one core each (each fuzzer is one process); each one's log is shown
	# whole, and either failing fails the target.
	SWIFT_BACKTRACE=enable=no .build-fuzz/debug/HTTPFuzz .build-fuzz/corpus \
	  -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -print_final_stats=1 -artifact_prefix=.build-fuzz/ \
	  > .build-fuzz/http.log 2>&1 & http=$$!; \
	SWIFT_BACKTRACE=enable=no .build-fuzz/debug/TelemetryFuzz .build-fuzz/telemetry-corpus \
	  -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -print_final_stats=1 -artifact_prefix=.build-fuzz/telemetry- \
	  > .build-fuzz/telemetry.log 2>&1; telemetry=$$?; \
	wait $$http; http=$$?; \
	cat .build-fuzz/http.log .build-fuzz/telemetry.log; \
	echo "fuzz: HTTPFuzz exited $$http, TelemetryFuzz $$telemetry"; \
	test $$http -eq 0 && test $$telemetry -eq 0

# Removes every build.
clean:
	rm -rf .build
