"""Small hand-made catalogs for tests that must not depend on shipped prices."""

from __future__ import annotations

from datetime import date
from typing import Any

from catalog.loader import default_catalog
from engine.specs import Catalog, GpuSpec


def gpu(gpu_id: str, memory_gb: float, **fields: Any) -> GpuSpec:
    base: dict[str, Any] = {
        "id": gpu_id,
        "name": gpu_id.upper(),
        "vendor": "NVIDIA",
        "memory_gb": memory_gb,
        "bf16_tflops": 100.0,
        "fp16_tflops": 100.0,
        "bf16": True,
        "flash_attention_2": "yes",
        "interconnect": "test link",
        "fabric": "nvlink",
        "status": "live",
        "price_per_gpu_hour": 1.0,
        "price_source": "test",
        "price_as_of": date(2026, 1, 1),
        "spec_source": "test",
    }
    base.update(fields)
    return GpuSpec(**base)


def catalog_with(*gpus: GpuSpec) -> Catalog:
    """The shipped models with only the given cards."""
    return Catalog(list(default_catalog().models.values()), list(gpus))
