# A throwaway container to grade untrusted MCP servers in: sealmark, plus Node (npx),
# Python and uv (uvx), git and PostgreSQL for the servers and targets that need them, run
# as an unprivileged user. See site/safety.md for the one-line run with no network but
# loopback.

FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
# The viewer is compiled in from cli/viewer-bundle/: no trunk needed.
RUN cargo build --release --locked -p sealmark

FROM ghcr.io/astral-sh/uv:0.9.5 AS uv

FROM node:20-bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates git python3 python3-venv postgresql \
    && rm -rf /var/lib/apt/lists/*
COPY --from=uv /uv /uvx /usr/local/bin/
COPY --from=build /src/target/release/sealmark /usr/local/bin/sealmark
# The cache directories exist in the image so that a volume mounted on one is the user's.
RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin sealmark \
    && mkdir -p /home/sealmark/.npm /home/sealmark/.cache/uv /reports \
    && chown -R 10001 /home/sealmark /reports
USER 10001
WORKDIR /reports
ENTRYPOINT ["sealmark"]
CMD ["--help"]
