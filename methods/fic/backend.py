"""Chat with any lm-eval model backend: the chat template applied turn by turn, ``generate_until`` requests.

``load(model, model_args)`` builds the model from lm-eval's registry (``hf``, ``vllm``, ...); without
``--model-args`` the ``hf`` backend runs the embedded SmolLM2-135M-Instruct, as ``neurips26 eval`` does. Each
conversation's messages go through the backend's ``apply_chat_template`` (the tokenizer's own template) with the
generation prompt, so a model sees exactly the turns a chat application would send it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from neurips26 import models
from neurips26.errors import UserError


@dataclass(frozen=True)
class Generation:
    """Sampling settings of every assistant turn."""

    max_gen_toks: int = 256
    temperature: float = 1.0

    def kwargs(self) -> dict[str, Any]:
        """lm-eval ``generate_until`` arguments (stop at the end-of-turn token, which the backend adds)."""
        if self.temperature > 0:
            return {"until": [], "max_gen_toks": self.max_gen_toks, "do_sample": True,
                    "temperature": self.temperature}
        return {"until": [], "max_gen_toks": self.max_gen_toks, "do_sample": False, "temperature": 0.0}


def parse_args(text: str | None) -> dict[str, Any]:
    """``key=value,key=value`` (lm-eval's ``--model_args``) as a dict."""
    from lm_eval.utils import simple_parse_args_string

    return simple_parse_args_string(text or "")


def load(model: str = "hf", model_args: str | None = None, *, device: str | None = None, batch_size: int = 8):
    """An lm-eval model from its registry; the embedded default when ``model`` is ``hf`` without arguments.
    Returns ``(lm, args)`` with the arguments used (recorded in the results)."""
    from lm_eval.api.registry import get_model

    args = parse_args(model_args)
    if model == "hf" and not args:
        args = {"pretrained": str(models.default_model_dir()), "dtype": "float32"}
    elif "pretrained" not in args:
        raise UserError("--model-args needs pretrained=<model id or folder>")
    models.check_model(str(args["pretrained"]))
    try:
        cls = get_model(model)
    except ValueError as exc:
        raise UserError(f"--model {model!r}: {exc}") from None
    lm = cls.create_from_arg_obj(args, {"batch_size": batch_size, "device": models.device(device)})
    if not hasattr(lm, "apply_chat_template"):
        raise UserError(f"--model {model!r}: the backend has no chat template")
    return lm, args


def template(lm: Any) -> str:
    """The chat template the backend applies (its tokenizer's), for the results file."""
    tokenizer = getattr(lm, "tokenizer", None)
    return str(getattr(tokenizer, "chat_template", None) or f"{type(lm).__name__}.apply_chat_template")


def chat(lm: Any, conversations: Sequence[Sequence[dict[str, str]]], generation: Generation) -> list[str]:
    """One assistant reply per conversation (a list of ``{"role", "content"}`` messages ending with the user)."""
    from lm_eval.api.instance import Instance

    requests = [Instance("generate_until", {}, (lm.apply_chat_template(list(messages)), generation.kwargs()), i)
                for i, messages in enumerate(conversations)]
    return [text.strip() for text in lm.generate_until(requests, disable_tqdm=True)]


def load_transformers(model_args: str | None, device: str) -> tuple[Any, Any, dict[str, Any]]:
    """A transformers causal LM and its tokenizer for training (the embedded model without arguments)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    args = parse_args(model_args) or {"pretrained": str(models.default_model_dir())}
    if "pretrained" not in args:
        raise UserError("--model-args needs pretrained=<model id or folder>")
    models.check_model(str(args["pretrained"]))
    tokenizer = AutoTokenizer.from_pretrained(args["pretrained"])
    model = AutoModelForCausalLM.from_pretrained(args["pretrained"], dtype=torch_dtype(device)).to(device)
    return model, tokenizer, args


def torch_dtype(device: str) -> Any:
    """bfloat16 on CUDA, float32 on the CPU."""
    import torch

    return torch.bfloat16 if device.startswith("cuda") else torch.float32


def wrap(model: Any, tokenizer: Any, batch_size: int = 8) -> Any:
    """An lm-eval ``hf`` model around an already loaded transformers model (for evaluating during training)."""
    from lm_eval.models.huggingface import HFLM

    return HFLM(pretrained=model, tokenizer=tokenizer, batch_size=batch_size)
