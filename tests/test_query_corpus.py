"""Questions as ML engineers type or paste them, each answered with an estimate: a
regression net over the whole language (model names, cards, launch lines, HF arguments,
configs pasted inline). Field-by-field behaviour is tested in test_query_words.py,
test_query_launchers.py and test_query_followups.py."""

from __future__ import annotations

import pytest

from bot.service import ReplyKind, Service

CORPUS = [
    "Llama-2-70b QLoRA on 2x RTX 3090 with FSDP, batch size 2, seq 512, gradient "
    "checkpointing, CPU offload",
    "meta-llama/Meta-Llama-3.1-8B-Instruct LoRA r=16 alpha=32 seq_len=2048 batch_size=8 "
    "1x A100 80GB hf",
    "mistralai/Mistral-7B-v0.1 full fine-tune 8x H100 SXM DeepSpeed ZeRO-3 bf16 seq 4096 bs 1",
    "Qwen2.5-7B lora rank 64 all linear layers 1xH100 80GB sequence length 8192 batch 2 "
    "flash attention 2",
    "llama 3 8B full finetune torchtitan 8 x H100 seq 8192 local batch size 1 activation "
    "checkpointing selective",
    "8B QLoRA on a single RTX 4090, batch 4, max length 2048, unsloth",
    "llama-3.2-1b full ft 1x rtx 3090 seq 1024 batch 8 adamw 8bit",
    "Llama 2 70B QLoRA on 2x 24GB GPUs",
    "Llama-3-70B QLoRA FSDP 2x RTX 4090 bs 1 seq 1024 HQQ",
    "Llama-3.2-3B full fine-tune 1x A100 80GB bs 8 seq 2048 pure bf16",
    "Llama-3.1-8B LoRA on MI300X rocm bs 8 seq 4096",
    "8b lora 1 h100 80gb pcie",
    "8b lora a100 40gb pcie",
    "8b full 8x h100 zero 3",
    "8b full 8x h100 fsdp full shard auto wrap",
    "8b lora 1x h100 attn_implementation eager",
    "8b lora num_train_epochs 3 per_device_train_batch_size 2 gradient_accumulation_steps 8 "
    "learning_rate 2e-4 bf16 tf32 logging_steps 10 save_steps 500 output_dir out",
    "8b lora bnb_4bit_quant_type nf4 bnb_4bit_compute_dtype bfloat16 "
    "bnb_4bit_use_double_quant True",
    "base_model: meta-llama/Llama-3.1-8B adapter: qlora sequence_len: 4096 "
    "micro_batch_size: 2 gradient_accumulation_steps: 4 num_epochs: 1 lora_r: 32",
    "model_name_or_path: Qwen/Qwen2.5-7B-Instruct stage: sft finetuning_type: lora "
    "lora_target: all cutoff_len: 2048 per_device_train_batch_size: 1 "
    "deepspeed: examples/deepspeed/ds_z3_config.json 4x a100",
    "torchrun --nproc_per_node 8 8b full fsdp h100",
    "accelerate launch --num_processes 8 --use_fsdp 8b lora h100",
    "tune run lora_finetune_distributed --config llama3_1/8B_lora 8x a100",
    "litgpt finetune_lora meta-llama/Meta-Llama-3.1-8B --devices 2 a100",
    "deepspeed --num_gpus 8 train.py --deepspeed ds_config_zero3.json llama-3.1-8b full bf16 "
    "h100",
    "8b lora h100 cuda 12.1 torch 2.5.1 transformers 4.46.0",
    "70b tokens 50M seq 4096 h100",
    "8b full hf 1x b200 optim adamw_torch_fused",
]


@pytest.fixture(scope="module")
def service() -> Service:
    return Service()


@pytest.mark.parametrize("text", CORPUS)
def test_a_question_as_people_write_it_gets_an_estimate(service: Service, text: str) -> None:
    reply = service.answer(text if "tokens" in text else f"{text} 10M tokens")
    assert reply.kind is ReplyKind.ESTIMATE, reply.text
