# corral as a network service: `corral mcp --listen 0.0.0.0:8080`, agents connecting over
# MCP Streamable HTTP with a bearer token. What the container must be allowed for each
# sandbox layer, and what `corral sandbox report` says when it is not: deploy/README.md.
#
#   podman build -t corral .
#   podman run --rm -p 8080:8080 -e CORRAL_MCP_TOKEN="$(openssl rand -hex 32)" corral
#
# Stage 1 builds corral; BUILDER names another image holding /usr/local/bin/corral to
# skip it (the image test does, with a binary built outside).

ARG BUILDER=builder

FROM docker.io/library/rust:1-slim-bookworm AS builder
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY crates crates
# corral-bench and the test helpers are workspace members but not part of the image.
RUN cargo build --release --locked -p corral-cli \
 && install -m 0755 target/release/corral /usr/local/bin/corral

FROM ${BUILDER} AS corral-binary

FROM docker.io/library/debian:bookworm-slim
# The tools the agents' commands use. bash is in the base; python3 and git are the usual
# extras (EXTRA_PACKAGES="" builds without them).
ARG EXTRA_PACKAGES="python3 git ca-certificates"
RUN if [ -n "$EXTRA_PACKAGES" ]; then \
      apt-get update \
      && apt-get install -y --no-install-recommends $EXTRA_PACKAGES \
      && rm -rf /var/lib/apt/lists/*; \
    fi
COPY --from=corral-binary /usr/local/bin/corral /usr/local/bin/corral
# The workspace the calls run in (mount the project here) and the trace, outside it.
RUN mkdir -p /workspace /var/lib/corral
ENV CORRAL_STORE=/var/lib/corral/trace.db
WORKDIR /workspace
VOLUME ["/var/lib/corral"]
EXPOSE 8080
# Off loopback corral refuses to start without a token: CORRAL_MCP_TOKEN, or
# --token-file /run/secrets/corral-token (a mounted Secret). Arguments after the image
# name are added: --workspace DIR, --tls-cert/--tls-key, --otlp URL, --idle-timeout ...
ENTRYPOINT ["/usr/local/bin/corral", "mcp", "--listen", "0.0.0.0:8080"]
