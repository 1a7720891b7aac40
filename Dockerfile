# An OCI image for CI jobs: the static binary alone, FROM scratch (no shell, no libc, about
# the binary's size). diff reads git repositories itself, so no git is needed either:
#
#   docker build -t hiera-lookup .
#   docker run --rm -v "$PWD:/repo" hiera-lookup lint --facts-dir ci/facts
#   docker run --rm -v "$PWD:/repo" hiera-lookup diff origin/main HEAD --facts-dir ci/facts --all
#
# The build stage runs the same script as the release tarballs (.ci/build-static.sh), with
# the toolchain Cargo.toml's rust-version names (a test keeps the two the same).
FROM docker.io/library/rust:1.95-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends musl-tools file \
 && rm -rf /var/lib/apt/lists/* \
 && rustup target add x86_64-unknown-linux-musl
WORKDIR /src
COPY . .
RUN .ci/build-static.sh x86_64-unknown-linux-musl \
 && install -D -m 0755 target/x86_64-unknown-linux-musl/release/hiera-lookup /out/hiera-lookup

FROM scratch
COPY --from=build /out/hiera-lookup /hiera-lookup
# The control repo is mounted here; the binary never writes to it.
WORKDIR /repo
ENTRYPOINT ["/hiera-lookup"]
CMD ["--help"]
