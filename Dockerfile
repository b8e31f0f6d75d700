# ftcost bot: `python -m bot`, configured only by environment variables and an optional
# mounted YAML file (FTCOST_CONFIG). Secrets come from the environment (never baked in).
FROM python:3.11-slim

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
# Discord-only deployments get a server with just those two on the same port.
ENV STORE_URL=sqlite:////data/ftcost.sqlite3 PORT=3000 HEALTH_PORT=3000
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ['HEALTH_PORT'] + '/healthz', timeout=2)"]
# SIGTERM (docker stop, Kubernetes) drains replies in flight before exiting.
STOPSIGNAL SIGTERM
ENTRYPOINT ["python", "-m", "bot"]
