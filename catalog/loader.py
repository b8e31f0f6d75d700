"""Load and validate the model and GPU catalogs shipped as YAML beside this module.

A malformed file raises :class:`CatalogError` naming the file and the entry, so a
bad edit is found at start-up, not in the middle of a reply.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from engine.specs import Catalog, GpuSpec, ModelSpec

CATALOG_DIR = Path(__file__).resolve().parent
MODELS_FILE = CATALOG_DIR / "models.yaml"
GPUS_FILE = CATALOG_DIR / "gpus.yaml"

T = TypeVar("T", bound=BaseModel)

# libyaml's loader is ~8x faster than the pure-Python one; same safe subset.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class CatalogError(ValueError):
    """A catalog file is missing, not YAML, or has an invalid entry."""


def _read_entries(path: Path, key: str) -> list[dict[str, Any]]:
    try:
        doc = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
    except OSError as exc:
        raise CatalogError(f"{path}: cannot read ({exc.strerror})") from exc
    except yaml.YAMLError as exc:
        raise CatalogError(f"{path}: not valid YAML ({exc})") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get(key), list):
        raise CatalogError(f"{path}: expected a top-level '{key}:' list")
    return doc[key]


def _validate(path: Path, entries: list[dict[str, Any]], model: type[T]) -> list[T]:
    out: list[T] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        label = entry.get("id", f"#{index + 1}") if isinstance(entry, dict) else f"#{index + 1}"
        try:
            item = model.model_validate(entry)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(entry)'}: {err['msg']}"
                for err in exc.errors()
            )
            raise CatalogError(f"{path}: entry '{label}': {problems}") from exc
        ident = str(getattr(item, "id", label))
        if ident in seen:
            raise CatalogError(f"{path}: entry '{label}': duplicate id")
        seen.add(ident)
        out.append(item)
    return out


def load_models(path: Path = MODELS_FILE) -> list[ModelSpec]:
    return _validate(path, _read_entries(path, "models"), ModelSpec)


def load_gpus(path: Path = GPUS_FILE) -> list[GpuSpec]:
    return _validate(path, _read_entries(path, "gpus"), GpuSpec)


def load_catalog(models_path: Path = MODELS_FILE, gpus_path: Path = GPUS_FILE) -> Catalog:
    """Read both catalogs and build the lookup structure."""
    return Catalog(load_models(models_path), load_gpus(gpus_path))


@lru_cache(maxsize=1)
def default_catalog() -> Catalog:
    """The catalog shipped with the package, loaded once per process."""
    return load_catalog()
