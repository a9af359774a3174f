# Waymark image: a plain transcription of the Makefile's release build.
# Until the daemon lands, the image runs the `waymark` CLI (validate, resolve);
# issue 7 adds `serve`, the data volume and the health check.

FROM swift:6.3-bookworm AS build
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --product waymark --static-swift-stdlib \
 && install -D "$(swift build -c release --show-bin-path)/waymark" /out/waymark

FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --home-dir /var/lib/waymark --create-home waymark
COPY --from=build /out/waymark /usr/local/bin/waymark
COPY manifests /usr/share/waymark/manifests
USER waymark
WORKDIR /var/lib/waymark
ENTRYPOINT ["/usr/local/bin/waymark"]
CMD ["--help"]
