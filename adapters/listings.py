"""Plain-text listings of the catalog (``ftcost models``, ``/ftcost gpus``, ...)."""

from __future__ import annotations

from adapters.report import Table
from engine.specs import Catalog


def model_table(catalog: Catalog) -> Table:
    """One row per model; ``also``: the bare sizes it answers, then its shortest alias
    that is not a Hub id (one, so the whole listing fits one Discord message)."""
    sizes: dict[str, list[str]] = {}
    for size, model_id in catalog.sizes.items():
        sizes.setdefault(model_id, []).append(size)
    rows = []
    for m in sorted(catalog.models.values(), key=lambda m: (m.family, m.params)):
        params = _three_figures(m.params)
        if m.is_moe:
            params += f"/{_three_figures(m.active_params)}"
        short = sorted((a for a in m.aliases if "/" not in a), key=len)[:1]
        rows.append([m.id, params, ", ".join([*sizes.get(m.id, []), *short])])
    return Table(["model", "params", "also"], rows, "lrl")


def _three_figures(n: float) -> str:
    """A parameter count to three significant figures (``8.03B``, ``70.6B``, ``671B``,
    ``559M``): the listing's column stays narrow enough for one Discord message."""
    value, unit = (n / 1e9, "B") if n >= 999.5e6 else (n / 1e6, "M")
    return f"{value:.3g}{unit}" if value < 999.5 else f"{value:.0f}{unit}"


def gpu_table(catalog: Catalog) -> Table:
    rows = []
    for g in sorted(catalog.gpus.values(), key=lambda g: (g.vendor, -g.memory_gb)):
        price = "n/a" if g.price_per_gpu_hour is None else f"${g.price_per_gpu_hour:.2f}"
        status = g.status if g.vendor == "NVIDIA" else f"{g.status}, not rec."
        rows.append(
            [g.id, f"{g.memory_gb:g}", f"{g.train_tflops:g}", g.fabric, price, status]
        )
    return Table(["gpu", "GB", "TFLOPs", "link", "$/hr", "status"], rows, "lrrlrl")


def model_listing(catalog: Catalog) -> str:
    return (
        model_table(catalog).render()
        + "\n\nMixture-of-experts params: total/active. Any other size (e.g. 20b) gets a "
        "synthetic Llama-style model."
    )


def gpu_listing(catalog: Catalog) -> str:
    return (
        gpu_table(catalog).render()
        + "\n\nTFLOPs: dense BF16 (FP16 where there is no BF16). Prices: typical $/GPU-hour."
    )
