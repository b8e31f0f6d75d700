"""SkyPilot's public catalog (``catalogs/<version>/<cloud>/vms.csv``) -> per-GPU offers.

Pure: text in, :class:`ParsedCatalog` out. Fetching is ``catalog.price_sources``'s job.

What a row means (SkyPilot's format, as of schema v8):

* Columns differ in order between clouds, so every row is read **by header name**.
  Required: ``InstanceType``, ``AcceleratorName``, ``AcceleratorCount``, ``Price``,
  ``Region``; ``SpotPrice``, ``AvailabilityZone`` and ``GpuInfo`` are read when present.
* ``Price`` and ``SpotPrice`` are USD per **instance**-hour; an offer's $/GPU-hour is the
  price divided by ``AcceleratorCount``. A blank price means "not offered"; so does
  ``0`` (Vast writes ``0.00`` for "no spot price").
* A spot price at or above the on-demand price is no discount (Azure's H100 v5 rows list
  spot = on-demand): it is dropped.
* GCP prices the GPU and its host VM separately: accelerator rows have a blank
  ``InstanceType``, host-VM rows a blank ``AcceleratorName``. For GPUs that only come in
  fixed machine types (A100, H100, H200, B200, L4) the host row of the same zone (or
  region) is added (:data:`GCP_HOSTS`); other GCP GPUs (T4, V100) attach to any N1 VM and
  are priced GPU-only.
* Known bad counts are corrected from :data:`COUNT_FIXES` (Azure's
  ``Standard_ND96isr_H100_v5`` says 12 GPUs; the VM has 8).

Accelerator names are mapped to catalog card ids by the explicit table
:data:`ACCELERATOR_MAP`: ``H100`` alone can be SXM, PCIe or NVL, and ``A100`` 40 or
80 GB, depending on the cloud and instance type. A name no rule matches is counted
under :attr:`ParsedCatalog.unknown` (never guessed); names of cards the catalog does not
carry (:data:`NOT_IN_CATALOG`) are counted as ``ignored``.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field

REQUIRED_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")
MAX_BAD_ROW_SHARE = 0.05
"""A file with more than this share of unreadable GPU rows (and more than
:data:`BAD_ROWS_TOLERATED`) fails as a whole: a half-broken download must not pass for
a good refresh. SkyPilot's published files have none."""
BAD_ROWS_TOLERATED = 1
"""Unreadable GPU rows accepted whatever the share (one glitch in a small file)."""
MIN_GPU_COUNT = 1 / 64
MAX_GPU_COUNT = 1024.0
"""``AcceleratorCount`` bounds: Azure sells a sixth of an A10 and GCP 16 A100s in one
VM; a count outside them is an unreadable row (its per-GPU price would be meaningless)."""
MAX_GPU_MEMORY_MIB = 16 * 1024 * 1024
"""The largest ``TotalGpuMemoryInMiB`` read (16 TiB: 8 GPUs of 2 TiB); beyond it, or not
a positive finite number, the row is unreadable."""


class MalformedCatalog(ValueError):
    """A ``vms.csv`` that cannot be read (missing columns, no readable GPU rows)."""


@dataclass(frozen=True, slots=True)
class MappingRule:
    """SkyPilot accelerator name (+ optional cloud, instance-type pattern and per-GPU
    memory) -> catalog card id. The first matching rule in the table wins."""

    accelerator: str
    """``AcceleratorName`` exactly as SkyPilot writes it."""
    card: str
    """Catalog card id (``catalog/gpus.yaml``)."""
    cloud: str | None = None
    """Only rows of this cloud; None for every cloud."""
    instance: str | None = None
    """Regular expression the whole ``InstanceType`` must match; None for any."""
    gpu_gib: int | None = None
    """Per-GPU memory (GiB, from ``GpuInfo``, within 10%) the row must report."""

    def matches(self, cloud: str, accelerator: str, instance: str, gpu_gib: float | None) -> bool:
        if accelerator != self.accelerator or (self.cloud and cloud != self.cloud):
            return False
        if self.instance is not None and not re.fullmatch(self.instance, instance):
            return False
        if self.gpu_gib is not None:
            return gpu_gib is not None and abs(gpu_gib - self.gpu_gib) <= 0.1 * self.gpu_gib
        return True


def _rule(
    accelerator: str,
    card: str,
    cloud: str | None = None,
    instance: str | None = None,
    gpu_gib: int | None = None,
) -> MappingRule:
    return MappingRule(accelerator, card, cloud, instance, gpu_gib)


ACCELERATOR_MAP: tuple[MappingRule, ...] = (
    # --- H100: SXM, PCIe or NVL, told apart by cloud and instance type ---------------
    _rule("H100", "h100-sxm", "aws", r"p5\..+"),
    _rule("H100", "h100-sxm", "gcp"),  # a3-highgpu
    _rule("H100-MEGA", "h100-sxm", "gcp"),  # a3-megagpu: the same card, more network
    _rule("H100", "h100-sxm", "azure", r"Standard_ND\d+is?r_H100_v5"),
    _rule("H100", "h100-nvl", "azure", r"Standard_NC\d+ad[a-z]*_H100_v5"),
    _rule("H100", "h100-pcie", "lambda", r"gpu_\d+x_h100_pcie"),
    _rule("H100", "h100-sxm", "lambda", r"gpu_\d+x_h100_sxm5"),
    _rule("H100", "h100-pcie", "runpod", r"\d+x_H100_[A-Z]+"),  # RunPod's plain H100: PCIe
    _rule("H100-SXM", "h100-sxm", "runpod"),
    _rule("H100", "h100-sxm", "vast", r"\d+x-H100_SXM-.+"),
    _rule("H100", "h100-nvl", "vast", r"\d+x-H100_NVL-.+"),
    _rule("H100", "h100-pcie", "vast", r"\d+x-H100_PCIE-.+"),
    _rule("H100", "h100-sxm", "nebius", r"gpu-h100-sxm_.+"),
    _rule("H100", "h100-sxm", "verda", r"\d+H100\.80S\..+"),
    _rule("H100", "h100-sxm", "hyperbolic"),  # GpuInfo: NVIDIA-H100-80GB-HBM3
    _rule("H100-NVLINK", "h100-sxm", "fluidstack"),
    # --- A100: 40 or 80 GB, SXM or PCIe ----------------------------------------------
    _rule("A100", "a100-40gb-sxm", "aws", r"p4d\..+"),
    _rule("A100", "a100-40gb-sxm", "gcp"),  # a2-highgpu
    _rule("A100", "a100-40gb-sxm", "azure", r"Standard_ND96asr_v4"),
    _rule("A100", "a100-40gb-sxm", "lambda", r"gpu_(1x_a100_sxm4|8x_a100)"),
    _rule("A100", "a100-40gb-pcie", "lambda", r"gpu_[124]x_a100"),
    _rule("A100", "a100-40gb-sxm", "vast", r"\d+x-A100_SXM4-.+", gpu_gib=40),
    _rule("A100", "a100-80gb-sxm", "vast", r"\d+x-A100_SXM4-.+", gpu_gib=80),
    _rule("A100", "a100-40gb-pcie", "vast", r"\d+x-A100_PCIE-.+", gpu_gib=40),
    _rule("A100", "a100-80gb-pcie", "vast", r"\d+x-A100_PCIE-.+", gpu_gib=80),
    _rule("A100-80GB", "a100-80gb-sxm", "aws", r"p4de\..+"),
    _rule("A100-80GB", "a100-80gb-sxm", "gcp"),  # a2-ultragpu
    _rule("A100-80GB", "a100-80gb-sxm", "azure", r"Standard_ND96amsr_A100_v4"),
    _rule("A100-80GB", "a100-80gb-pcie", "azure", r"Standard_NC\d+ads_A100_v4"),
    _rule("A100-80GB", "a100-80gb-sxm", "lambda", r"gpu_\d+x_a100_80gb_sxm4"),
    _rule("A100-80GB", "a100-80gb-pcie", "runpod"),  # GpuInfo: "A100 PCIe"
    _rule("A100-80GB-SXM", "a100-80gb-sxm", "runpod"),
    _rule("A100-80GB", "a100-80gb-pcie", "fluidstack", r"A100_PCIE_80GB::\d+"),
    # Verda (ex-DataCrunch) names multi-GPU A100 machines by their total memory.
    _rule("A100-80GB", "a100-80gb-sxm", "verda"),
    _rule("A100-80GB-160GB", "a100-80gb-sxm", "verda"),
    _rule("A100-80GB-320GB", "a100-80gb-sxm", "verda"),
    _rule("A100-80GB-640GB", "a100-80gb-sxm", "verda"),
    _rule("A100-40GB", "a100-40gb-sxm", "verda"),
    _rule("A100-40GB-160GB", "a100-40gb-sxm", "verda"),
    _rule("A100-40GB-320GB", "a100-40gb-sxm", "verda"),
    # --- one name, one card, on every cloud ------------------------------------------
    _rule("B200", "b200"),
    _rule("H200", "h200-sxm"),
    _rule("GH200", "gh200"),
    _rule("L40S", "l40s"),
    _rule("L40", "l40"),
    _rule("L4", "l4"),
    _rule("A10G", "a10g"),
    _rule("A10", "a10"),
    _rule("A40", "a40"),
    _rule("A6000", "rtx-a6000"),  # Lambda
    _rule("RTXA6000", "rtx-a6000"),  # RunPod, Vast
    _rule("RTX-A6000", "rtx-a6000"),  # Verda
    _rule("RTX6000-Ada", "rtx-6000-ada"),
    _rule("RTX-6000-Ada", "rtx-6000-ada"),
    _rule("RTXA5000", "rtx-a5000"),  # RunPod, Vast
    _rule("RTXA4000", "rtx-a4000"),  # RunPod, Vast
    _rule("A4000", "rtx-a4000"),
    _rule("RTXPRO6000WS", "rtx-pro-6000"),  # Workstation Edition
    _rule("RTXPRO6000S", "rtx-pro-6000"),  # Vast: Server Edition
    _rule("RTX-PRO-6000", "rtx-pro-6000"),
    _rule("RTX5090", "rtx-5090"),
    _rule("RTX4090", "rtx-4090"),
    _rule("RTX3090", "rtx-3090"),
    # Vast writes RTX3080 for the 10 GB card, the 12 GB card and the 3080 Ti alike: only
    # its plain RTX_3080 machines of 10 GiB per card are the catalog's 10 GB RTX 3080.
    _rule("RTX3080", "rtx-3080", "vast", r"\d+x-RTX_3080-.+", gpu_gib=10),
    _rule("B300", "b300"),
    _rule("V100", "v100-16gb"),
    _rule("Tesla-V100", "v100-16gb"),
    _rule("V100-32GB", "v100-32gb"),
    _rule("T4", "t4"),
    _rule("P100", "p100"),  # the 16 GB PCIe card (GCP attaches it to any N1 VM)
    _rule("MI300X", "mi300x"),
)
"""SkyPilot accelerator name -> catalog card, most specific rules first."""

NOT_IN_CATALOG: frozenset[str] = frozenset(
    {
        "K80", "M60", "P4", "P40", "M4000", "P4000", "RTXA4500", "RTX4000-Ada",
        "RTX3060", "RTX3070", "RTX6000", "V620", "Radeon MI25",
    }
)  # fmt: skip
"""Names SkyPilot uses for cards the catalog does not carry: skipped and counted as
ignored, not as unknown. TPU slices (``tpu-*``) are ignored too."""

COUNT_FIXES: dict[tuple[str, str], float] = {
    ("azure", "Standard_ND96isr_H100_v5"): 8.0,
}
"""(cloud, instance type) -> the real GPU count where SkyPilot's is wrong."""

GCP_HOSTS: dict[str, dict[int, str]] = {
    "A100": {1: "a2-highgpu-1g", 2: "a2-highgpu-2g", 4: "a2-highgpu-4g",
             8: "a2-highgpu-8g", 16: "a2-megagpu-16g"},
    "A100-80GB": {1: "a2-ultragpu-1g", 2: "a2-ultragpu-2g", 4: "a2-ultragpu-4g",
                  8: "a2-ultragpu-8g"},
    "H100": {1: "a3-highgpu-1g", 2: "a3-highgpu-2g", 4: "a3-highgpu-4g", 8: "a3-highgpu-8g"},
    "H100-MEGA": {8: "a3-megagpu-8g"},
    "H200": {8: "a3-ultragpu-8g"},
    "B200": {8: "a4-highgpu-8g"},
    "L4": {1: "g2-standard-4", 2: "g2-standard-24", 4: "g2-standard-48", 8: "g2-standard-96"},
}  # fmt: skip
"""GCP accelerator name -> {GPU count: the machine type that carries them}."""


@dataclass(frozen=True, slots=True)
class Offer:
    """One priced way to rent a card: per-GPU prices in $/GPU-hour."""

    cloud: str
    card: str
    accelerator: str
    instance_type: str
    """The instance (for GCP: the host machine type, or ``""`` for a GPU-only price)."""
    region: str
    zone: str
    count: float
    """GPUs per instance."""
    price: float | None
    """On-demand $/GPU-hour (None: not offered on demand)."""
    spot: float | None
    """Spot/interruptible $/GPU-hour (None: no spot offer)."""


@dataclass(frozen=True, slots=True)
class ParsedCatalog:
    """A cloud's ``vms.csv`` read: its GPU offers and what could not be used."""

    cloud: str
    offers: tuple[Offer, ...]
    rows: int
    """Data rows in the file (every kind)."""
    gpu_rows: int
    """Rows naming an accelerator (GCP host-VM and CPU rows excluded), and rows too
    ragged to tell."""
    unknown: dict[str, int] = field(default_factory=dict)
    """Accelerator names (``"H100 @ gpu_1x_h100_nvl"`` when only the instance type was
    new) no rule maps -> rows. Logged; never guessed."""
    ignored: int = 0
    """Rows of cards the catalog does not carry (:data:`NOT_IN_CATALOG`, TPUs)."""
    bad_rows: int = 0
    """GPU rows with an unreadable count or price."""
    count_fixes: int = 0
    """Rows whose GPU count was corrected from :data:`COUNT_FIXES`."""
    missing_host: int = 0
    """GCP accelerator rows skipped because their host VM row was not in the file."""


def map_accelerator(
    cloud: str, accelerator: str, instance: str, gpu_gib: float | None = None
) -> str | None:
    """The catalog card id for a SkyPilot row, or None when no rule matches."""
    for rule in ACCELERATOR_MAP:
        if rule.matches(cloud, accelerator, instance, gpu_gib):
            return rule.card
    return None


_NAMES_WITH_RULES = frozenset(r.accelerator for r in ACCELERATOR_MAP)
_NEEDS_MEMORY = frozenset(r.accelerator for r in ACCELERATOR_MAP if r.gpu_gib is not None)


_DECIMAL = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
"""A number as SkyPilot writes one (ASCII digits: not ``1_5`` or ``١٢``, which Python's
``float`` also reads)."""


def _number(text: str | None) -> float | None:
    """A CSV number; None for blank. Raises ValueError for text or non-finite values."""
    text = (text or "").strip()
    if not text:
        return None
    if not _DECIMAL.fullmatch(text):
        raise ValueError(text)
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def _offered(value: float | None) -> float | None:
    """0 (or blank) means not offered."""
    return None if value is None or value == 0 else value


_LONG_NUMBER = re.compile(r"[0-9]{40}")


def gpu_info_gib(gpu_info: str | None, count: float) -> float | None:
    """Per-GPU memory (GiB) from a ``GpuInfo`` cell's ``TotalGpuMemoryInMiB``, or None
    when the cell has no such number.

    The cell is a Python-repr dict (most clouds), JSON (Verda) or a bare name. Raises
    ValueError (an unreadable row) when the cell is nested too deeply to read, holds a
    number of :data:`_LONG_NUMBER` digits or more, or its ``TotalGpuMemoryInMiB`` is a
    number but not one in (0, :data:`MAX_GPU_MEMORY_MIB`].
    """
    text = (gpu_info or "").strip()
    if not text.startswith("{") or count <= 0:
        return None
    if _LONG_NUMBER.search(text):  # Python refuses 4,300+ digits; 40 are already absurd
        raise ValueError("GpuInfo holds a number of 40 or more digits")
    try:
        info = json.loads(text, parse_int=float)  # 400 digits: inf, refused below
    except RecursionError as exc:
        raise ValueError("GpuInfo nested too deeply") from exc
    except ValueError:
        try:
            info = ast.literal_eval(text)
        except (RecursionError, MemoryError) as exc:
            raise ValueError("GpuInfo nested too deeply") from exc
        except (ValueError, SyntaxError, TypeError):
            return None
    total = info.get("TotalGpuMemoryInMiB") if isinstance(info, dict) else None
    if isinstance(total, bool) or not isinstance(total, int | float):
        return None
    if not 0 < total <= MAX_GPU_MEMORY_MIB:  # also NaN; an int is compared exactly
        raise ValueError("TotalGpuMemoryInMiB out of range")
    return float(total) / count / 1024


def _reader(text: str) -> csv.DictReader[str]:
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff"), newline=""))
    header = reader.fieldnames or []
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise MalformedCatalog(f"not a SkyPilot vms.csv: missing column(s) {', '.join(missing)}")
    return reader


_HostKey = tuple[str, str]


def _host_prices(rows: list[dict[str, str]]) -> dict[_HostKey, tuple[float | None, float | None]]:
    """GCP host-VM rows: (machine type, zone or region) -> (on-demand, spot) $/hour."""
    hosts: dict[_HostKey, tuple[float | None, float | None]] = {}
    for row in rows:
        machine = (row.get("InstanceType") or "").strip()
        if not machine or (row.get("AcceleratorName") or "").strip():
            continue
        try:
            price = _offered(_number(row.get("Price")))
            spot = _offered(_number(row.get("SpotPrice")))
        except ValueError:
            continue
        zone = (row.get("AvailabilityZone") or "").strip()
        region = (row.get("Region") or "").strip()
        if zone:
            hosts[(machine, zone)] = (price, spot)
        old = hosts.get((machine, region))
        if old is None or (price is not None and (old[0] is None or price < old[0])):
            hosts[(machine, region)] = (price, spot)
    return hosts


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def parse_vms_csv(text: str, cloud: str) -> ParsedCatalog:
    """Read one cloud's ``vms.csv`` into per-GPU offers for catalog cards.

    Raises :class:`MalformedCatalog` when the header lacks a required column, when the
    file has no GPU rows, or when more than :data:`MAX_BAD_ROW_SHARE` of its GPU rows
    (and more than :data:`BAD_ROWS_TOLERATED`) are unreadable.
    """
    try:
        rows = list(_reader(text))
    except csv.Error as exc:
        raise MalformedCatalog(f"unreadable CSV: {exc}") from exc
    hosts = _host_prices(rows) if cloud == "gcp" else {}
    offers: list[Offer] = []
    unknown: Counter[str] = Counter()
    gpu_rows = ignored = bad = fixes = missing_host = 0
    for row in rows:
        if None in row or any(v is None for v in row.values()):
            # A row with more or fewer cells than the header: it may have been a GPU row.
            gpu_rows, bad = gpu_rows + 1, bad + 1
            continue
        name = row["AcceleratorName"].strip()
        if not name:
            continue  # CPU VM, or a GCP host VM (read above)
        gpu_rows += 1
        if name in NOT_IN_CATALOG or name.lower().startswith("tpu-"):
            ignored += 1
            continue
        instance = row["InstanceType"].strip()
        try:
            count = _number(row["AcceleratorCount"])
            price = _offered(_number(row["Price"]))
            spot = _offered(_number(row.get("SpotPrice")))
        except ValueError:
            bad += 1
            continue
        if count is None or not MIN_GPU_COUNT <= count <= MAX_GPU_COUNT:
            bad += 1
            continue
        fixed = COUNT_FIXES.get((cloud, instance))
        if fixed is not None and fixed != count:
            count, fixes = fixed, fixes + 1
        try:
            gib = gpu_info_gib(row.get("GpuInfo"), count) if name in _NEEDS_MEMORY else None
        except ValueError:
            bad += 1
            continue
        card = map_accelerator(cloud, name, instance, gib)
        if card is None:
            unknown[f"{name} @ {instance}" if name in _NAMES_WITH_RULES else name] += 1
            continue
        region = row["Region"].strip()
        zone = (row.get("AvailabilityZone") or "").strip()
        if cloud == "gcp" and not instance and name in GCP_HOSTS:
            machine = GCP_HOSTS[name].get(round(count))
            host = hosts.get((machine or "", zone)) or hosts.get((machine or "", region))
            if machine is None or host is None:
                missing_host += 1
                continue
            instance = machine
            price, spot = _add(price, host[0]), _add(spot, host[1])
        if price is not None and spot is not None and spot >= price:
            spot = None  # not a discount: a catalog artifact (Azure H100 v5)
        offers.append(
            Offer(
                cloud=cloud,
                card=card,
                accelerator=name,
                instance_type=instance,
                region=region,
                zone=zone,
                count=count,
                price=None if price is None else price / count,
                spot=None if spot is None else spot / count,
            )
        )
    if gpu_rows == 0:
        raise MalformedCatalog("no GPU rows")
    if bad > BAD_ROWS_TOLERATED and bad > MAX_BAD_ROW_SHARE * gpu_rows:
        raise MalformedCatalog(
            f"{bad} of {gpu_rows} GPU rows unreadable (more than {MAX_BAD_ROW_SHARE:.0%}): "
            "the file looks damaged, so none of it is used"
        )
    return ParsedCatalog(
        cloud=cloud,
        offers=tuple(offers),
        rows=len(rows),
        gpu_rows=gpu_rows,
        unknown=dict(unknown),
        ignored=ignored,
        bad_rows=bad,
        count_fixes=fixes,
        missing_host=missing_host,
    )
