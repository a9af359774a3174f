# Waymark: a plain transcription of the Makefile's release build (no Docker engine runs
# where this is developed; `make check-deploy` lints it with hadolint and checkov).
#
#   docker build -t waymark .
#   docker run -p 8080:8080 -v waymark-data:/var/lib/waymark waymark
#
# The first start seeds the volume from the storefront example and prints an admin token
# once (docker logs). Followers: docker run … waymark serve --host 0.0.0.0 --follow URL
# with WAYMARK_FOLLOW_TOKEN in the environment.

FROM swift:6.3-bookworm AS build
# libcurl's and libpq's headers (CCurl, CLibPQ, through pkg-config), as `make deps` installs them.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libcurl4-openssl-dev=7.88.* libpq-dev=15.* pkg-config=1.8.* \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --product waymark --static-swift-stdlib \
 && install -D "$(swift build -c release --show-bin-path)/waymark" /out/waymark

FROM debian:bookworm-slim
# Only libcurl (link checks, followers, the health check), libpq (serve --database) and CA
# certificates beside the binary.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libcurl4=7.88.* libpq5=15.* ca-certificates=20230311* \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 waymark \
 && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/waymark --create-home waymark
COPY --from=build /out/waymark /usr/local/bin/waymark
COPY manifests /usr/share/waymark/manifests
USER 10001:10001
WORKDIR /var/lib/waymark
VOLUME ["/var/lib/waymark"]
EXPOSE 8080
# SIGTERM (docker stop) stops accepting, finishes requests in flight, exits 0.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["/usr/local/bin/waymark", "health", "--url", "http://127.0.0.1:8080"]
ENTRYPOINT ["/usr/local/bin/waymark"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8080", "--data-dir", "/var/lib/waymark/data", \
     "--seed", "/usr/share/waymark/manifests/storefront"]
