# ftcost bot: python -m bot with configuration from the environment and a mounted YAML file.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app

COPY pyproject.toml README.md ./
COPY engine ./engine
COPY adapters ./adapters
COPY catalog ./catalog
COPY bot ./bot
RUN pip install . && useradd --create-home --uid 10001 ftcost && mkdir /data && chown ftcost /data

USER ftcost
ENV FTCOST_STORE=/data/ftcost.sqlite3 PORT=3000
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=3s CMD python -c "import os, urllib.request; urllib.request.urlopen(f'http://127.0.0.1:{os.environ.get(\"HEALTH_PORT\") or os.environ[\"PORT\"]}/healthz', timeout=2)"
ENTRYPOINT ["python", "-m", "bot"]
