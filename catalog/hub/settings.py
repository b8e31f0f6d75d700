"""Settings of the Hugging Face Hub resolver (the bot's ``hub:`` config section).

The endpoint and token follow the Hub's own tools: ``HF_ENDPOINT`` (default
``https://huggingface.co``) and ``HF_TOKEN`` from the environment. The token is never
part of these settings, so it never lands in a YAML file or a log line.
"""

from __future__ import annotations

import os

from pydantic import BaseModel, ConfigDict, Field, field_validator

DEFAULT_ENDPOINT = "https://huggingface.co"
ENDPOINT_ENV = "HF_ENDPOINT"
TOKEN_ENV = "HF_TOKEN"


class HubSettings(BaseModel):
    """How the resolver talks to the Hub and how long it remembers answers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    endpoint: str | None = None
    """Base URL of the Hub; None reads ``HF_ENDPOINT`` (else ``https://huggingface.co``)."""
    timeout_s: float = Field(default=10.0, gt=0, le=120)
    """Seconds each Hub request may take (``config.json``, the safetensors index...)."""
    cache_ttl_days: float = Field(default=7.0, gt=0, le=365)
    """How long a resolved model is remembered in the state store."""
    negative_ttl_minutes: float = Field(default=10.0, ge=0, le=24 * 60)
    """How long "no such model" / "family not supported" / "broken config" answers are
    remembered (0: never). Timeouts, outages and token problems are never remembered."""

    @field_validator("endpoint")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return value.rstrip("/")

    def resolved_endpoint(self) -> str:
        """The endpoint in force: the setting, else ``HF_ENDPOINT``, else the public Hub."""
        if self.endpoint:
            return self.endpoint
        env = os.environ.get(ENDPOINT_ENV, "").strip()
        return (env or DEFAULT_ENDPOINT).rstrip("/")

    @staticmethod
    def token() -> str | None:
        """``HF_TOKEN`` from the environment (None when unset or blank)."""
        value = os.environ.get(TOKEN_ENV, "").strip()
        return value or None
