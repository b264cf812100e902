"""What a submission says about its model: the metadata fields, cleaned of markup, and how problems are reported.

Every check collects its problems as ``(field path, reason)`` pairs; a rejected submission raises
:class:`SubmissionRejected` with all of them, so the submitter can fix everything at once.

* :class:`ModelInfo` - the model card fields; text is stripped of markup (HTML tags and entities, script and
  style elements, Markdown links, control and bidi characters) before it is checked, so nothing a submitter
  types can render as HTML or script in the UI.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from neurips26.errors import UserError

MIB = 2**20
MAX_RESULTS_BYTES = 5 * MIB
MAX_SAMPLES_BYTES = 200 * MIB
MAX_MODEL_ID = 128
MAX_TEXT = 64
MAX_PARAMS = 10**13
PARAMS_TOLERANCE = 0.10  # declared vs counted by lm-eval (tied embeddings and rounding differ a little)

Precision = Literal["float32", "float16", "bfloat16", "int8", "int4", "other"]
ModelType = Literal["pretrained", "fine-tuned", "instruction-tuned", "rl-tuned", "merged", "other"]
PRECISIONS: tuple[str, ...] = Precision.__args__
MODEL_TYPES: tuple[str, ...] = ModelType.__args__
TORCH_DTYPES = {"torch.float32": "float32", "torch.float16": "float16", "torch.bfloat16": "bfloat16",
                "float32": "float32", "float16": "float16", "bfloat16": "bfloat16"}

@dataclass(frozen=True)
class Limits:
    """Size bounds of the files a submission brings (bytes)."""

    results_bytes: int = MAX_RESULTS_BYTES
    samples_bytes: int = MAX_SAMPLES_BYTES


DEFAULT_LIMITS = Limits()


def too_big(size: int, limit: int) -> str:
    return f"file is {size:,} bytes, over the limit of {limit:,}"


class SubmissionRejected(UserError):
    """A submission that fails validation; ``problems`` lists ``(field path, reason)`` pairs.

    Both parts are passed through :func:`clean_text`: they may quote what the submitter sent.
    """

    def __init__(self, problems: Iterable[tuple[str, str]]):
        self.problems = [(clean_text(str(where)), clean_text(str(why))) for where, why in problems]
        super().__init__(format_problems(self.problems))


def format_problems(problems: Iterable[tuple[str, str]]) -> str:
    """``field: reason; field: reason`` (what ``Entry.reason`` holds)."""
    return "; ".join(f"{where}: {why}" for where, why in problems)


# -- markup ----------------------------------------------------------------------------------------------------

_ELEMENT = re.compile(r"<\s*(script|style|iframe|object|embed|template)\b.*?(?:<\s*/\s*\1\s*>|$)", re.I | re.S)
_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_TAG = re.compile(r"<\s*[/!?]?\s*[A-Za-z][^>]*(?:>|$)", re.S)
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\((?:[^()]|\([^()]*\))*\)")  # one level of nested ()
_ACTIVE = re.compile(r"[<>`]")


def clean_text(value: Any) -> Any:
    """Text with markup removed: entities decoded, script-like elements dropped with their content, tags and
    Markdown links reduced to their text, ``<>`` and backticks and control/format characters removed,
    whitespace collapsed. Non-strings pass through (the field's type check answers them)."""
    if not isinstance(value, str):
        return value
    for _ in range(3):  # &amp;lt;script&amp;gt; decodes twice
        decoded = html.unescape(value)
        if decoded == value:
            break
        value = decoded
    value = _TAG.sub("", _COMMENT.sub("", _ELEMENT.sub("", value)))
    value = _ACTIVE.sub("", _MD_LINK.sub(r"\1", value))
    value = "".join(" " if ch.isspace() else ch for ch in value if unicodedata.category(ch)[0] != "C" or ch.isspace())
    return " ".join(value.split())


# -- model metadata --------------------------------------------------------------------------------------------

MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?")
SHA = re.compile(r"[0-9a-f]{7,64}")


def _model_id(value: str) -> str:
    if not MODEL_ID.fullmatch(value):
        raise ValueError(f"must look like ORG/NAME or NAME (letters, digits, '.', '_', '-'), got {value!r}")
    return value


def _revision(value: str) -> str:
    if not SHA.fullmatch(value):
        raise ValueError(f"must be a commit sha, 7 to 64 hex characters, got {value!r}")
    return value


def _lower(value: Any) -> Any:
    return clean_text(value).lower() if isinstance(value, str) else value


Text = Annotated[str, BeforeValidator(clean_text), Field(min_length=1, max_length=MAX_TEXT)]


class ModelInfo(BaseModel):
    """Who and what a submission is about."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model_id: Annotated[str, BeforeValidator(clean_text), Field(min_length=1, max_length=MAX_MODEL_ID),
                        AfterValidator(_model_id)]
    revision: Annotated[str, BeforeValidator(_lower), AfterValidator(_revision)]
    precision: Annotated[Precision, BeforeValidator(_lower)]
    params: Annotated[int, Field(gt=0, lt=MAX_PARAMS)]
    license: Text
    model_type: Annotated[ModelType, BeforeValidator(_lower)]
    submitter: Text


def problems_of(error: ValidationError, prefix: str = "") -> list[tuple[str, str]]:
    """pydantic errors as ``(field path, reason)`` pairs."""
    out = []
    for item in error.errors():
        where = prefix + ".".join(str(part) for part in item["loc"]) if item["loc"] else prefix.rstrip(".")
        reason = "missing" if item["type"] == "missing" else item["msg"].removeprefix("Value error, ")
        out.append((where or "(root)", reason))
    return out


def check_model_info(raw: ModelInfo | Mapping[str, Any]) -> ModelInfo:
    """A :class:`ModelInfo` from a mapping; raises :class:`SubmissionRejected` naming each bad field."""
    if isinstance(raw, ModelInfo):
        return raw
    try:
        return ModelInfo.model_validate(dict(raw))
    except ValidationError as exc:
        raise SubmissionRejected(problems_of(exc)) from None


def display_fields(raw: ModelInfo | Mapping[str, Any]) -> dict[str, Any]:
    """The metadata of a submission as stored even when it is rejected: text cleaned and cut to length,
    ``params`` an int or None."""
    data = raw.model_dump() if isinstance(raw, ModelInfo) else dict(raw)
    out: dict[str, Any] = {}
    for name in ("model_id", "revision", "precision", "license", "model_type", "submitter"):
        value = data.get(name)
        value = "" if value is None else clean_text(str(value))
        out[name] = value[: MAX_MODEL_ID if name == "model_id" else MAX_TEXT]
    params = data.get("params")
    out["params"] = params if isinstance(params, int) and not isinstance(params, bool) and 0 < params < 2**63 else None
    return out


