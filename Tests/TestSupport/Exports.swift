// The fixtures every suite reads (the example's schemas and routes, dates, a seeded
// generator) live in LibraryTestSupport, which the app's libraries' tests use alone so they
// build wherever the libraries do; suites of the server see them through this module too.
@_exported import LibraryTestSupport
