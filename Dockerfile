# ftcost bot: `python -m bot`, configured only by environment variables and an optional
# mounted YAML file (FTCOST_CONFIG). Secrets come from the environment (never baked in).
# The base image is pinned to a Python patch release and a Debian release, so two builds
# months apart start from the same interpreter and OS. 3.11 because requirements.lock is
# resolved for it (docs/deploy.md, "Refreshing the lock"); 3.11.17 is the newest 3.11
# patch (3.11 gets security fixes only) we could confirm published as an official slim
# image when this was written; trixie (Debian 13) because the unqualified python:3.11-slim
# this replaces already meant trixie, and bookworm (Debian 12) left Debian's regular
# security support in June 2026. Not pinned by digest: the digest could not be fetched
# offline when this was written, and it changes whenever Docker rebuilds the tag for
# Debian fixes. To pin it, add `@sha256:...` from
#   docker buildx imagetools inspect python:3.11.17-slim-trixie
# and move tag and digest together.
FROM python:3.11.17-slim-trixie

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app

# Dependencies first, from the lock (exact versions, every file checked against its hash),
# so a code change rebuilds only the layers below. Refresh the lock: docs/deploy.md.
COPY requirements.lock ./
RUN pip install --require-hashes --no-deps -r requirements.lock

# Then the project itself, without dependencies: the lock already installed them.
COPY pyproject.toml README.md LICENSE ./
COPY engine ./engine
COPY adapters ./adapters
COPY catalog ./catalog
COPY bot ./bot
RUN pip install --no-deps . \
    && pip check \
    && useradd --create-home --uid 10001 --shell /usr/sbin/nologin ftcost \
    && mkdir -p /data \
    && chown ftcost /data

USER ftcost
# SQLite in /data (mount a volume there) unless STORE_URL names Redis.
# HEALTH_PORT = PORT: the HTTP server answers /healthz and /metrics; Socket Mode and
# Discord-only deployments get a server with just those two on the same port. Inside the
# container it listens on every interface (HEALTH_HOST=0.0.0.0; the bare default is
# 127.0.0.1), or Docker's port mapping could not reach it: who may connect is decided by
# how the port is published (`-p 127.0.0.1:3000:3000`, docker-compose.yml).
ENV STORE_URL=sqlite:////data/ftcost.sqlite3 PORT=3000 HEALTH_PORT=3000 HEALTH_HOST=0.0.0.0
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ['HEALTH_PORT'] + '/healthz', timeout=2)"]
# SIGTERM (docker stop, Kubernetes) drains replies in flight before exiting.
STOPSIGNAL SIGTERM
ENTRYPOINT ["python", "-m", "bot"]
