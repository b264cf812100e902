"""A tiny, randomly initialised Idefics3 vision-language model, built locally, for end-to-end tests.

No VLM weights exist offline, so tests of the multimodal tasks build one from a
config: 2-layer vision and text towers (hidden 32 and 64), the SmolLM2
tokenizer of the embedded model plus the Idefics3 special tokens, the PIL
Idefics3 image processor (64-pixel tiles, no splitting: 4 tokens per image) and
a SmolVLM-style chat template. It loads with ``AutoModelForImageTextToText`` /
``AutoProcessor`` like any Hub VLM, so lm-eval's ``hf-multimodal`` runs it::

    MODEL=$(python -c "from neurips26.corpora.video.tiny_vlm import tiny_vlm; print(tiny_vlm())")
    lm_eval run --include_path "$(neurips26 tasks --path)" --tasks tar_mcq --model hf-multimodal \
        --model_args pretrained=$MODEL --device cpu --limit 2

Its answers are noise; it exists to exercise the pipeline, not to be scored.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from neurips26 import models, settings

SPECIAL_TOKENS = (["<fake_token_around_image>", "<image>", "<end_of_utterance>", "<global-img>"]
                  + [f"<row_{i}_col_{j}>" for i in range(1, 7) for j in range(1, 7)])
CHAT_TEMPLATE = (
    "<|im_start|>{% for message in messages %}{{ message['role'] | capitalize }}"
    "{% if message['content'][0]['type'] == 'image' %}{{ ':' }}{% else %}{{ ': ' }}{% endif %}"
    "{% for line in message['content'] %}{% if line['type'] == 'text' %}{{ line['text'] }}"
    "{% elif line['type'] == 'image' %}{{ '<image>' }}{% endif %}{% endfor %}<end_of_utterance>\n{% endfor %}"
    "{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
)
NAME = "tiny-idefics3"


def _tokenizer():
    from transformers import AutoTokenizer

    converted = settings.cache_dir() / "models" / models.DEFAULT_MODEL_NAME
    if (converted / "tokenizer.json").is_file():
        return AutoTokenizer.from_pretrained(str(converted))
    gguf = models.gguf_path()
    return AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)


def build(out: Path, seed: int = 0, image_size: int = 64, text_hidden: int = 64, vision_hidden: int = 32,
          layers: int = 2) -> Path:
    """Write the model, tokenizer and processor to ``out`` (a folder ``from_pretrained`` loads)."""
    import torch
    from transformers import (
        Idefics3Config,
        Idefics3ForConditionalGeneration,
        Idefics3ImageProcessorPil,
        Idefics3Processor,
    )

    tokenizer = _tokenizer()
    tokenizer.add_special_tokens({"additional_special_tokens": SPECIAL_TOKENS})
    patch, scale = 16, 2
    image_seq_len = (image_size // patch) ** 2 // scale**2
    images = Idefics3ImageProcessorPil(size={"longest_edge": image_size}, max_image_size={"longest_edge": image_size},
                                       do_image_splitting=False)
    processor = Idefics3Processor(image_processor=images, tokenizer=tokenizer, image_seq_len=image_seq_len,
                                  chat_template=CHAT_TEMPLATE)
    config = Idefics3Config(
        vision_config={"hidden_size": vision_hidden, "intermediate_size": 2 * vision_hidden,
                       "num_hidden_layers": layers, "num_attention_heads": 2, "image_size": image_size,
                       "patch_size": patch},
        text_config={"model_type": "llama", "vocab_size": len(tokenizer), "hidden_size": text_hidden,
                     "intermediate_size": 2 * text_hidden, "num_hidden_layers": layers, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "max_position_embeddings": 16384,
                     "bos_token_id": tokenizer.bos_token_id, "eos_token_id": tokenizer.eos_token_id,
                     "pad_token_id": tokenizer.pad_token_id, "tie_word_embeddings": True},
        scale_factor=scale, image_token_id=tokenizer.convert_tokens_to_ids("<image>"), tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = Idefics3ForConditionalGeneration(config).eval()
    out = Path(out)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    processor.save_pretrained(tmp)
    shutil.rmtree(out, ignore_errors=True)
    tmp.replace(out)
    return out


def tiny_vlm(seed: int = 0) -> Path:
    """The tiny model's folder in the cache (``<cache>/models/tiny-idefics3-seed<seed>``), built on first use."""
    from filelock import FileLock

    target = settings.cache_dir() / "models" / f"{NAME}-seed{seed}"
    if not (target / "model.safetensors").is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(target) + ".lock"):
            if not (target / "model.safetensors").is_file():
                build(target, seed)
    return target
