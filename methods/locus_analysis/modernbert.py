"""The released LOCUS classifiers: one ModernBERT-base sequence classifier per axis, through transformers.

``AXES`` names the LocalLaws models on the Hub; any of them can be replaced by a local folder
(``--model opacity=PATH``). Each is loaded with ``AutoModelForSequenceClassification`` and run in batches on
``"<heading>\\n<text>"`` (CUDA in bfloat16 when present, else CPU in float32). What a model predicts is read
from its own ``config.id2label``, never assumed:

- one output (regression): the value itself (opacity, paternalism, ...);
- classes named by numbers ("1".."5"): the expected value under the softmax;
- classes named by LOCUS labels: a function (Context, Rules, Process, Enforcement), a topic (Buildings,
  Business, Nuisance, Zoning, Other), both ("Rules/Zoning", "Rules|Zoning", "Rules - Zoning"), or
  substantive / not substantive ("substantive", "non-substantive", "true", "false"); a topic implies
  substantive.

Generic names (``LABEL_0``...) cannot be mapped and are refused with the model named.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from neurips26.corpora.locus.records import FUNCTIONS, TOPICS

from neurips26.models import device as default_device

AXES = {
    "substantive": "LocalLaws/LOCUS-Substantive",
    "opacity": "LocalLaws/LOCUS-Opacity",
    "paternalism": "LocalLaws/LOCUS-Paternalism",
    "enforcement_discretion": "LocalLaws/LOCUS-Enforcement-Discretion",
    "problem_salience": "LocalLaws/LOCUS-Problem-Salience",
}
CONTINUOUS = ("opacity", "paternalism", "enforcement_discretion", "problem_salience")
MAX_LENGTH = 1024  # word pieces per section (ModernBERT takes up to 8,192)
BATCH = 16
_SUBSTANTIVE = {"substantive": True, "true": True, "yes": True, "non-substantive": False, "nonsubstantive": False,
                "not substantive": False, "not_substantive": False, "false": False, "no": False}


def parse_label(name: str) -> dict:
    """What one class name says: ``{"function": ..., "topic": ..., "is_substantive": ...}`` (any subset)."""
    text = str(name).strip()
    if text.lower() in _SUBSTANTIVE:
        return {"is_substantive": _SUBSTANTIVE[text.lower()]} | ({} if _SUBSTANTIVE[text.lower()] else {"topic": None})
    out: dict = {}
    for part in re.split(r"\s*[/|,]\s*|\s+-\s+|\s*:\s*", text):
        match = {v.lower(): v for v in (*FUNCTIONS, *TOPICS)}.get(part.lower())
        if match is None:
            return {}
        out["function" if match in FUNCTIONS else "topic"] = match
    if out.get("topic"):
        out["is_substantive"] = True
    return out


@dataclass
class AxisModel:
    axis: str
    source: str
    model: object
    tokenizer: object
    device: str
    values: np.ndarray | None  # numeric class values (ordinal classes), else None
    labels: list[dict] | None  # parsed class names (categorical classes), else None

    @property
    def regression(self) -> bool:
        return self.values is None and self.labels is None


def load(axis: str, source: str, device: str | None = None) -> AxisModel:
    """Load one axis model from a Hub id or a local folder and work out its label mapping."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    if axis not in AXES:
        raise ValueError(f"unknown axis {axis!r}; axes: {', '.join(AXES)}")
    if device is None:
        device = default_device()
    try:
        tokenizer = AutoTokenizer.from_pretrained(source)
        model = AutoModelForSequenceClassification.from_pretrained(
            source, dtype=torch.bfloat16 if device == "cuda" else torch.float32)
    except (OSError, ValueError) as exc:
        where = "local folder" if Path(source).exists() else "Hub id (no local folder of that name)"
        raise FileNotFoundError(f"{axis} model {source!r} ({where}) cannot be loaded: "
                                f"{str(exc).splitlines()[0]}") from None
    model.to(device).eval()
    names = [model.config.id2label[i] for i in range(model.config.num_labels)]
    values = labels = None
    if model.config.num_labels > 1:
        if all(re.fullmatch(r"-?\d+(\.\d+)?", str(n).strip()) for n in names):
            if axis not in CONTINUOUS:
                raise ValueError(f"{axis} model {source!r}: numeric classes {', '.join(names)}; the {axis} axis "
                                 "needs LOCUS labels")
            values = np.array([float(n) for n in names])
        else:
            labels = [parse_label(n) for n in names]
            unknown = [n for n, parsed in zip(names, labels, strict=True) if not parsed]
            if unknown:
                raise ValueError(f"{axis} model {source!r}: config.id2label names {', '.join(map(repr, unknown))} "
                                 f"are not LOCUS labels ({', '.join(FUNCTIONS + TOPICS)}, substantive) nor numbers")
    elif axis not in CONTINUOUS:
        raise ValueError(f"{axis} model {source!r} has a single (regression) output; the {axis} axis needs classes")
    return AxisModel(axis, source, model, tokenizer, device, values, labels)


def logits(m: AxisModel, headings: Sequence[str], texts: Sequence[str], batch_size: int = BATCH,
           max_length: int = MAX_LENGTH, progress: Callable[[int], None] | None = None) -> np.ndarray:
    """Raw outputs [n, num_labels], in input order, computed ``batch_size`` sections at a time."""
    import torch

    inputs = [f"{h or ''}\n{t or ''}" for h, t in zip(headings, texts, strict=True)]
    out = []
    for start in range(0, len(inputs), batch_size):
        batch = m.tokenizer(inputs[start:start + batch_size], padding=True, truncation=True,
                            max_length=max_length, return_tensors="pt").to(m.device)
        batch.pop("token_type_ids", None)
        with torch.inference_mode():
            out.append(m.model(**batch).logits.float().cpu().numpy())
        if progress:
            progress(len(out[-1]))
    return np.concatenate(out) if out else np.zeros((0, m.model.config.num_labels))


def predict(m: AxisModel, headings: Sequence[str], texts: Sequence[str], batch_size: int = BATCH,
            max_length: int = MAX_LENGTH, progress: Callable[[int], None] | None = None) -> dict[str, list]:
    """Fields this model determines, one list per field (``opacity`` ... or function/topic/is_substantive)."""
    z = logits(m, headings, texts, batch_size, max_length, progress)
    if m.regression:
        return {m.axis: z[:, 0].tolist()}
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    if m.values is not None:
        return {m.axis: (p @ m.values).tolist()}
    rows = [m.labels[i] for i in p.argmax(1)]
    fields = sorted({k for parsed in m.labels for k in parsed})
    return {f: [r.get(f) for r in rows] for f in fields}


def make_random_model(out: Path, labels: Sequence[str] | None = None, hidden_size: int = 32, layers: int = 2,
                      heads: int = 2, intermediate_size: int = 64, vocab: Sequence[str] = ()) -> Path:
    """Save a randomly initialised ModernBertForSequenceClassification with the released models' config
    shape (ModernBERT, ``id2label``; ``labels=None`` gives one regression output) and a word-level tokenizer
    over ``vocab`` to ``out``. For tests and the bench: no weights can be downloaded here."""
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import ModernBertConfig, ModernBertForSequenceClassification, PreTrainedTokenizerFast

    special = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
    words = sorted({w.lower() for w in vocab} - set(special))
    ids = {w: i for i, w in enumerate([*special, *words])}
    tok = Tokenizer(models.WordLevel(ids, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[
        ("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", cls_token="[CLS]",
                                        sep_token="[SEP]", pad_token="[PAD]", mask_token="[MASK]",
                                        model_max_length=MAX_LENGTH)
    names = list(labels) if labels else ["LABEL_0"]
    config = ModernBertConfig(
        vocab_size=len(ids), hidden_size=hidden_size, num_hidden_layers=layers, num_attention_heads=heads,
        intermediate_size=intermediate_size, max_position_embeddings=MAX_LENGTH, pad_token_id=ids["[PAD]"],
        cls_token_id=ids["[CLS]"], sep_token_id=ids["[SEP]"], bos_token_id=ids["[CLS]"], eos_token_id=ids["[SEP]"],
        num_labels=len(names), id2label=dict(enumerate(names)), label2id={n: i for i, n in enumerate(names)},
        problem_type=None if labels else "regression")
    torch.manual_seed(0)
    model = ModernBertForSequenceClassification(config)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return Path(out)
