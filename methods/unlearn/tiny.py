"""A small role-playing model trained from scratch on a forget set's records, for unlearning at CPU scale.

Where the embedded SmolLM2-135M-Instruct is too slow to train and evaluate many times (a CPU, a claim's seeds and
splits), the model to unlearn is built here: a byte-level BPE tokenizer trained on the records' prompts and
answers (``<pad>``, ``<eos>``, no chat template, so prompts are the plain role prompts of :mod:`.prompts`), a
small Llama, and plain next-token training on the role prompts -> reference answers of every role. Both the
unlearning methods and our evaluator then run on it unchanged (a transformers causal LM and tokenizer).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from . import data


@dataclass
class TinyConfig:
    vocab_size: int = 4096
    hidden: int = 128
    layers: int = 2
    heads: int = 4
    steps: int = 400  # pre-training steps
    batch_size: int = 16
    lr: float = 5e-3
    max_length: int = 80
    seed: int = 0


def corpus_tokenizer(texts: list[str], vocab_size: int):
    """A byte-level BPE tokenizer trained on ``texts`` (a transformers fast tokenizer; pad and eos tokens)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<pad>", "<eos>"],
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                                       show_progress=False))
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>", pad_token="<pad>")


def tiny_llama(tokenizer, cfg: TinyConfig):
    """A randomly initialised Llama sized by ``cfg`` for ``tokenizer`` (tied input and output embeddings)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(cfg.seed)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=cfg.hidden, intermediate_size=3 * cfg.hidden,
                         num_hidden_layers=cfg.layers, num_attention_heads=cfg.heads,
                         num_key_value_heads=cfg.heads, max_position_embeddings=2 * cfg.max_length + 64,
                         tie_word_embeddings=True, pad_token_id=tokenizer.pad_token_id,
                         eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.eos_token_id)
    return LlamaForCausalLM(config)


def pretrain(model, tokenizer, examples: list[data.Example], cfg: TinyConfig, device: str = "cpu") -> list[dict]:
    """Train every weight of ``model`` on ``examples`` (NLL of the answer given the role prompt) for ``cfg.steps``
    AdamW steps with a one-cycle learning rate; the per-step log."""
    torch.manual_seed(cfg.seed)
    model.to(device).train()
    batches = data.batches(data.encode(tokenizer, examples, cfg.max_length), cfg.batch_size,
                           tokenizer.pad_token_id, cfg.seed, device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, cfg.lr, total_steps=max(cfg.steps, 1),
                                                   pct_start=0.1)
    log = []
    for step in range(1, cfg.steps + 1):
        start = time.perf_counter()
        loss = model(**next(batches)).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        log.append({"step": step, "loss": loss.item(), "seconds": time.perf_counter() - start})
    model.eval()
    return log


def build(examples: list[data.Example], cfg: TinyConfig, device: str = "cpu"):
    """(model, tokenizer, log): a tokenizer trained on the examples' texts and a tiny Llama pre-trained on them."""
    tokenizer = corpus_tokenizer([e.prompt for e in examples] + [e.answer for e in examples], cfg.vocab_size)
    model = tiny_llama(tokenizer, cfg)
    log = pretrain(model, tokenizer, examples, cfg, device)
    return model, tokenizer, log
