# hashlined in a container: a static binary on distroless, as a non-root
# user, serving the volume /workspace on 0.0.0.0:7420.
#
#   docker build -t hashlined --build-arg VERSION=$(git describe --tags --always --dirty) .
#   docker run -d -p 7420:7420 \
#     -v "$PWD":/workspace \
#     -v "$PWD/tokens.yaml":/etc/hashline/tokens.yaml:ro \
#     -v hashline-state:/var/lib/hashline \
#     hashlined
#
# Tokens are required: the server listens off loopback (0.0.0.0), and
# hashlined refuses a non-loopback address without --tokens (SECURITY.md
# describes the file). The workspace must be writable by uid 65532, the
# image's user (or run with --user matching the files' owner).
#
# make image builds the same server as an OCI image from scratch, with no
# Docker engine (deploy/image); deploy/kubernetes runs it.

FROM golang:1.26-bookworm AS build
WORKDIR /src
# Dependencies first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=(devel)
ARG COMMIT=unknown
# grpcnotrace: gRPC without golang.org/x/net/trace (and html/template),
# which hashline never turns on; a smaller binary keeps less of itself
# resident in every server (BENCHMARKS.md, "Deployment").
RUN CGO_ENABLED=0 go build -tags grpcnotrace -trimpath -buildvcs=false \
      -ldflags "-s -w -X github.com/hashline/hashline/internal/buildinfo.version=${VERSION} -X github.com/hashline/hashline/internal/buildinfo.commit=${COMMIT}" \
      -o /out/ ./cmd/hashlined ./cmd/hashline \
 && mkdir -p /out/workspace /out/state

# static: no libc needed (CGO_ENABLED=0); nonroot: uid and gid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/hashlined /out/hashline /usr/local/bin/
# Empty mount points owned by the user, so that named volumes start writable.
COPY --from=build --chown=65532:65532 /out/workspace /workspace
COPY --from=build --chown=65532:65532 /out/state /var/lib/hashline
USER 65532:65532
# The workspace agents edit, and the server's own state (snapshots for
# rebases, kept across restarts; it must lie outside the workspace).
VOLUME ["/workspace", "/var/lib/hashline"]
EXPOSE 7420
ENTRYPOINT ["/usr/local/bin/hashlined", "serve"]
CMD ["--root", "/workspace", "--listen", "0.0.0.0:7420", "--tokens", "/etc/hashline/tokens.yaml", "--state-dir", "/var/lib/hashline"]
