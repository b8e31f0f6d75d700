"""Where a config is silent, its trainer's own default applies, not ftcost's query
defaults, and the reply says so (``per_device_train_batch_size: (unset) → micro-batch 8
(the Trainer's default)``). Only defaults read in the frameworks' source are here; each
cites the file (in the public repositories named) it was read from.
"""

from __future__ import annotations

from adapters.trainconfig.reader import Reader
from engine.choices import Method


def epochs_meaning(epochs: float, reader: Reader) -> str:
    """``3 epochs``, qualified when ``max_steps`` counts the run instead: the Trainer's
    documented precedence (transformers ``TrainingArguments.max_steps``: "Overrides
    `num_train_epochs`"; axolotl hands its ``max_steps`` to the Trainer)."""
    text = f"{epochs:g} epoch" + ("" if epochs == 1 else "s")
    steps = reader.fields.get("steps")
    if isinstance(steps, int):
        text += (f", only where the run is given in tokens: max_steps {steps:,} overrides "
                 "the epochs, as the Trainer does")
    return text


def _lora(reader: Reader) -> bool:
    return reader.fields.get("method") in (Method.LORA, Method.QLORA)


def axolotl(r: Reader) -> None:
    """axolotl's schema defaults: ``num_epochs`` 1.0 and ``micro_batch_size`` 1
    (axolotl-ai-cloud/axolotl src/axolotl/utils/schemas/training.py,
    ``HyperparametersConfig``); ``sequence_len`` 512 and ``gradient_checkpointing`` False
    (src/axolotl/utils/schemas/config.py, ``AxolotlInputConfig``); ``lora_dropout`` 0.0
    with an adapter (src/axolotl/utils/schemas/peft.py, ``LoraConfig.lora_dropout`` and
    its ``validate_lora_dropout``, which sets 0.0 when an adapter leaves it unset), not
    the 0.05 of TRL's ``ModelConfig`` that the ``hf`` profile counts."""
    r.default("sequence_len", "sequence 512", "axolotl", seq_len=512)
    r.default("micro_batch_size", "micro-batch 1", "axolotl", micro_batch=1)
    r.default("num_epochs", epochs_meaning(1.0, r), "axolotl", epochs=1.0)
    r.default("gradient_checkpointing", "gradient checkpointing off", "axolotl",
              grad_checkpointing=False)
    if _lora(r):
        r.default("lora_dropout", "LoRA dropout 0", "axolotl", lora_dropout=0.0)


def trainer(r: Reader, owner: str) -> None:
    """transformers' ``TrainingArguments`` defaults, which TRL's configs and
    LLaMA-Factory's inherit: ``per_device_train_batch_size`` 8 and ``num_train_epochs``
    3.0 (huggingface/transformers src/transformers/training_args.py; LLaMA-Factory's
    src/llamafactory/hparams/training_args.py subclasses ``Seq2SeqTrainingArguments``
    without changing them). ``owner``: whose defaults they are, as the reply says."""
    r.default("per_device_train_batch_size", "micro-batch 8", owner, micro_batch=8)
    r.default("num_train_epochs", epochs_meaning(3.0, r), owner, epochs=3.0)


def trl(r: Reader) -> None:
    """TRL's defaults: ``SFTConfig.max_length`` 1024 (huggingface/trl
    trl/trainer/sft_config.py); ``ModelConfig``'s ``lora_r`` 16, ``lora_dropout`` 0.05 and
    ``use_bnb_nested_quant`` False (trl/trainer/model_config.py); and the Trainer's
    (:func:`trainer`)."""
    trainer(r, "the Trainer")
    if "seq_len" not in r.fields:
        r.default("max_length", "sequence 1,024", "TRL SFTConfig", seq_len=1024)
        r.note("max_length is unset: TRL SFTConfig's 1,024 is counted. A script on plain "
               "TrainingArguments sets its own length: add it after the config (`seq 4096`).")
    if _lora(r):
        r.default("lora_r", "LoRA rank 16", "TRL", lora_rank=16)
        r.default("lora_dropout", "LoRA dropout 0.05", "TRL", lora_dropout=0.05)
    if r.fields.get("method") is Method.QLORA:
        r.default("use_bnb_nested_quant", "double quantization off", "TRL",
                  double_quant=False)


def llama_factory(r: Reader) -> None:
    """LLaMA-Factory's defaults: ``cutoff_len`` 2048 (hiyouga/LLaMA-Factory
    src/llamafactory/hparams/data_args.py); ``lora_rank`` 8 and ``lora_dropout`` 0.0
    (src/llamafactory/hparams/finetuning_args.py, ``LoraArguments``); and the Trainer's
    (:func:`trainer`)."""
    r.default("cutoff_len", "sequence 2,048", "LLaMA-Factory", seq_len=2048)
    if _lora(r):
        r.default("lora_rank", "LoRA rank 8", "LLaMA-Factory", lora_rank=8)
        r.default("lora_dropout", "LoRA dropout 0", "LLaMA-Factory", lora_dropout=0.0)
    trainer(r, "the Trainer")
