"""Small hand-made catalogs for tests that must not depend on shipped prices."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog.loader import default_catalog
from engine.memory import Footprint, footprint
from engine.profiles import resolve
from engine.request import Request
from engine.specs import Catalog, GpuSpec

if TYPE_CHECKING:
    from adapters.parse import QueryError


AXOLOTL_QLORA = """\
# axolotl examples/llama-3/qlora.yml
base_model: meta-llama/Meta-Llama-3.1-8B
model_type: AutoModelForCausalLM
tokenizer_type: AutoTokenizer

load_in_8bit: false
load_in_4bit: true

datasets:
  - path: tatsu-lab/alpaca
    type: alpaca
val_set_size: 0.05
output_dir: ./outputs/qlora-out

adapter: qlora
sequence_len: 4096
sample_packing: true
pad_to_sequence_len: true

lora_r: 32
lora_alpha: 16
lora_dropout: 0.05
lora_target_linear: true

gradient_accumulation_steps: 4
micro_batch_size: 2
num_epochs: 4
optimizer: paged_adamw_32bit
lr_scheduler: cosine
learning_rate: 0.0002

bf16: auto
tf32: false
gradient_checkpointing: true
flash_attention: true
"""
"""An axolotl QLoRA config as its examples write one (Llama 3.1 8B, 4,096 tokens)."""



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


H100_LIKE = gpu("g80", 80, bf16_tflops=1000.0, matmul_tflops=800.0, hbm_gbps=3000.0,
                link_gbps=450.0)
"""An 80 GB data-center card with round figures, for time-model tests."""


def resolved_footprint(catalog: Catalog, **fields: Any) -> Footprint:
    """The footprint of a request built from ``fields``, its framework profile applied."""
    asked = Request(**fields)
    arch = catalog.model(asked.model).architecture
    return footprint(arch, resolve(asked, arch))


# --- the query language against the shipped catalog ------------------------------------


def parsed(text: str) -> Request:
    """``text`` parsed as a new question against the shipped catalog."""
    from adapters.parse import parse_query

    return parse_query(text, default_catalog())


def fields(text: str) -> dict[str, Any]:
    """The fields ``text`` sets (defaults left out)."""
    return parsed(text).model_dump(exclude_defaults=True)


def refused(text: str) -> QueryError:
    """The QueryError ``text`` is refused with, as a new question (fails if it parses)."""
    import pytest

    from adapters.parse import QueryError

    with pytest.raises(QueryError) as caught:
        parsed(text)
    return caught.value


def refusal(text: str) -> str:
    """The message of the QueryError ``text`` is refused with (fails if it parses)."""
    return refused(text).message


def followup(previous: str, text: str) -> Request:
    """``text`` as a reply in the thread of the question ``previous``."""
    from adapters.parse import apply_followup

    return apply_followup(parsed(previous), text, default_catalog())


def refused_followup(previous: str, text: str) -> QueryError:
    """The QueryError the reply ``text`` under ``previous`` is refused with."""
    import pytest

    from adapters.parse import QueryError

    with pytest.raises(QueryError) as caught:
        followup(previous, text)
    return caught.value


def example(err: QueryError) -> str:
    """The example query a refusal ends with."""
    return err.message.split("Example: ", 1)[1]


# --- the bot's configuration file ----------------------------------------------------------


def write_config(tmp_path: Path, text: str) -> Path:
    """``text`` as the bot's YAML configuration file in ``tmp_path``."""
    path = tmp_path / "bot.yml"
    path.write_text(text, encoding="utf-8")
    return path


def config_refused(tmp_path: Path, text: str, env: dict[str, str]) -> str:
    """The ConfigError message the configuration ``text`` with ``env`` is refused with."""
    import pytest

    from bot.config import ConfigError
    from bot.config_load import load_config

    with pytest.raises(ConfigError) as err:
        load_config(write_config(tmp_path, text), env)
    return str(err.value)
