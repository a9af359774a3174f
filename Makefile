# Waymark — the two commands a fresh Debian machine with the Swift toolchain needs:
#   make run    build and start Waymark on its embedded default (the storefront example)
#   make test   build and run every test
# Everything beyond the toolchain is installed here, when missing.

SWIFT      ?= swift
EXAMPLE    := manifests/storefront
SCHEMAS    := --schema $(EXAMPLE)/schema-ios-5.2.0.json --schema $(EXAMPLE)/schema-ios-5.3.0.json
BIN        := .build/debug/waymark
RELEASE    := .build/release

.PHONY: all build run test test-unit check-example bench bench-http deps toolchain clean

all: build

toolchain:
	@command -v $(SWIFT) >/dev/null || { echo "The Swift toolchain (swift 6) is required: https://www.swift.org/install/linux/" >&2; exit 2; }

# Nothing beyond the toolchain is needed yet; later targets add their packages here.
deps: toolchain

build: deps
	$(SWIFT) build

# Until the HTTP daemon lands (issue 3/4), `make run` runs the engine on the example:
# validates its routes against both app versions, then resolves sample links.
run: build
	$(BIN) validate $(SCHEMAS) $(EXAMPLE)/routes.json
	@for url in 'storefront://product/p1' 'https://www.storefront.example/orders/42' \
	            'https://storefront.example/search?q=red+shoes&utm_source=mail' \
	            'https://storefront.example/product/..%2Fadmin' 'https://storefront.example/sale/spring'; do \
	  echo; echo "\$$ waymark resolve '$$url' (logged out, 2026-03-15)"; \
	  $(BIN) resolve "$$url" --schema $(EXAMPLE)/schema-ios-5.3.0.json --routes $(EXAMPLE)/routes.json --now 2026-03-15T00:00:00Z; \
	done

test: test-unit check-example

test-unit: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --disable-xctest

# The shipped example must stay valid: `waymark validate` exits 0 on it.
check-example: build
	$(BIN) validate $(SCHEMAS) $(EXAMPLE)/routes.json >/dev/null
	@echo "check-example: $(EXAMPLE) is valid"

# Resolutions per second on one core for 10,000 generated routes, against a linear scan.
bench: deps
	$(SWIFT) build -c release --product RouteEngineBench
	$(RELEASE)/RouteEngineBench

# Waymark's HTTP server against nginx on the same ~40 KB file: req/s, p50, p99, ratios.
# Installs nginx and wrk from Debian when missing.
bench-http: deps
	bash Tests/Scripts/bench-http.sh

clean:
	rm -rf .build
