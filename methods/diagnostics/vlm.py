"""An Idefics3-style VLM for the vision probing instance and the relay: inputs, image-token positions, answers.

:func:`tiny_idefics3` builds a small randomly initialised Idefics3 (SigLIP-style vision tower, pixel-shuffle
connector, Llama text model) for tests and CPU runs; :func:`load_idefics3` loads a real one from a local folder
(e.g. SmolVLM) with its processor, images not split into tiles so that the image tokens form one grid. Either
way a :class:`VLM` turns an image and the authenticity question into model inputs, says where the image tokens
are, and reads the answer as the logits of "yes" (tampered) against "no".
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from skimage.transform import resize

QUESTION = "Has this image been tampered with? Answer yes or no."


@dataclass
class VLM:
    """A VLM with what the diagnostics need to drive it."""

    model: Any
    image_size: int
    grid: int  # image tokens per side
    image_token_id: int
    answer_ids: tuple[int, int]  # token ids of "yes" (tampered) and "no"
    prompt_ids: list[int]  # the question's tokens, after the image
    bos_id: int = 1
    processor: Any = None

    @property
    def text_layers(self) -> Any:
        """The language model's decoder blocks (hooks attach here)."""
        return self.model.model.text_model.layers

    def inputs(self, image: np.ndarray) -> dict[str, torch.Tensor]:
        """input_ids (bos, the image tokens, the question) and pixel_values for one RGB image in [0, 1]."""
        if self.processor is not None:
            messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": QUESTION}]}]
            text = self.processor.apply_chat_template(messages, add_generation_prompt=True)
            batch = self.processor(text=text, images=[(image * 255).astype(np.uint8)], return_tensors="pt")
            return {k: v for k, v in batch.items() if k in ("input_ids", "attention_mask", "pixel_values",
                                                            "pixel_attention_mask")}
        pixels = resize(image, (self.image_size, self.image_size), anti_aliasing=True).astype(np.float32)
        pixels = torch.from_numpy((pixels - 0.5) / 0.5).permute(2, 0, 1)[None, None]
        ids = [self.bos_id] + [self.image_token_id] * self.grid ** 2 + self.prompt_ids
        return {"input_ids": torch.tensor([ids]), "pixel_values": pixels}

    def image_positions(self, input_ids: torch.Tensor) -> np.ndarray:
        """Positions of the image tokens in a batch of one."""
        positions = np.flatnonzero(input_ids[0].cpu().numpy() == self.image_token_id)
        if len(positions) != self.grid ** 2:
            raise ValueError(f"{len(positions)} image tokens, expected a {self.grid}x{self.grid} grid")
        return positions

    def answer_logits(self, logits: torch.Tensor) -> torch.Tensor:
        """(batch, 2): the last position's logits of "yes" and "no"."""
        return logits[:, -1, list(self.answer_ids)]


def tiny_idefics3(seed: int = 0, image_size: int = 64, patch: int = 8, scale: int = 2, layers: int = 6,
                  dim: int = 64) -> VLM:
    """A small random Idefics3 (vocabulary of 128 ids; the image token 100; "yes" 10, "no" 11)."""
    from transformers import Idefics3Config, Idefics3ForConditionalGeneration  # lazy: heavy

    config = Idefics3Config(
        vision_config={"hidden_size": dim, "intermediate_size": 2 * dim, "num_hidden_layers": 2,
                       "num_attention_heads": 2, "image_size": image_size, "patch_size": patch},
        text_config={"model_type": "llama", "hidden_size": dim, "intermediate_size": 2 * dim,
                     "num_hidden_layers": layers, "num_attention_heads": 4, "num_key_value_heads": 4,
                     "vocab_size": 128, "max_position_embeddings": 512},
        scale_factor=scale, image_token_id=100)
    torch.manual_seed(seed)
    model = Idefics3ForConditionalGeneration(config).eval()
    return VLM(model, image_size, image_size // patch // scale, 100, (10, 11), [20, 21, 22, 23, 24])


def load_idefics3(folder: Path, device: str = "cpu") -> VLM:
    """A real Idefics3-style VLM (and its processor) from a local folder, images kept whole (one token grid)."""
    from transformers import AutoModelForImageTextToText, AutoProcessor  # lazy: heavy

    processor = AutoProcessor.from_pretrained(str(folder), local_files_only=True)
    processor.image_processor.do_image_splitting = False
    model = AutoModelForImageTextToText.from_pretrained(str(folder), local_files_only=True).to(device).eval()
    size = int(processor.image_processor.max_image_size["longest_edge"])
    vision = model.config.vision_config
    grid = size // vision.patch_size // model.config.scale_factor
    tokenizer = processor.tokenizer
    answers = tuple(tokenizer(word, add_special_tokens=False)["input_ids"][0] for word in ("yes", "no"))
    return VLM(model, size, grid, int(model.config.image_token_id), answers, [], processor=processor)
