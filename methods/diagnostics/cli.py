"""``neurips26 probe text|vision`` and ``neurips26 gfm train``: layer-wise probes and the forensic relay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from neurips26 import models
from neurips26.options import DataOpt, DeviceOpt, ModelOpt, out_option, resource_folder
from neurips26.output import Format, FormatOpt, emit
from neurips26.stats import wilson

from . import forgery, gfm, penalty, probing, vision
from .vlm import VLM, load_idefics3, tiny_idefics3

probe = typer.Typer(no_args_is_help=True, help="Layer-wise linear probes of a model's hidden states.")
forensic = typer.Typer(no_args_is_help=True, help="Gated Forensic Memory: a relay from the most forensic layer "
                                                  "into the late layers of a frozen VLM.")

OutOpt = Annotated[Path, out_option("Folder for the curve (JSON) and its plot.")]
VlmOpt = Annotated[Path | None, typer.Option(exists=True, help="A local Idefics3-style VLM folder (e.g. SmolVLM); "
                                                  "default: a small random Idefics3 (mechanics only, no trained "
                                                  "perception).")]


def _curve_rows(scores: list[probing.LayerScore]) -> list[dict]:
    top = probing.shape(scores).peak  # None when the curve is flat: no layer is marked
    return [{"layer": s.layer, "auc": round(s.auc, 3), "low": round(s.low, 3), "high": round(s.high, 3),
             "peak": "<-" if s.layer == top else ""} for s in scores]


def _save(out: Path, name: str, scores: list[probing.LayerScore], title: str, extra: dict | None = None) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    reading = probing.shape(scores)
    typer.echo(reading.describe(), err=True)
    (out / f"{name}.json").write_text(json.dumps({"peak": reading.peak, "flat": reading.flat, "mid": reading.mid,
                                                  "shape": reading.describe(), **(extra or {}),
                                                  "layers": [s.__dict__ for s in scores]}, indent=1))
    return probing.plot({name: scores}, out / f"{name}.png", title)


def _vlm(model: Path | None, device: str) -> VLM:
    return load_idefics3(model, device) if model is not None else tiny_idefics3()


@probe.command("text")
def text(data: DataOpt = None,
         sections: Annotated[int, typer.Option(min=1, help="Sections with a penalty clause to probe.")] = 60,
         model: ModelOpt = None, device: DeviceOpt = None,
         out: OutOpt = Path("probes"), fmt: FormatOpt = Format.table) -> None:
    """Where do a LOCUS section's penalty-clause tokens separate from the rest of its tokens?"""
    from transformers import AutoModelForCausalLM, AutoTokenizer  # lazy: heavy

    folder = resource_folder(data, "locus")  # read before the model loads: a missing folder costs no load
    texts = penalty.section_texts(folder)
    source = model or models.default_model_dir()
    tokenizer = AutoTokenizer.from_pretrained(str(source))
    lm = AutoModelForCausalLM.from_pretrained(str(source)).to(models.device(device))
    items = penalty.items(texts, tokenizer)[:sections]
    typer.echo(f"probing {len(items)} sections of {folder}", err=True)
    scores = probing.probe(probing.collect(lm, items, models.device(device)))
    emit(_curve_rows(scores), fmt, title=f"penalty-clause tokens, {len(items)} sections: probe AUC per layer")
    plot = _save(out, "text", scores, f"{Path(source).name}: penalty-clause tokens ({len(items)} LOCUS sections)",
                 {"sections": len(items), "model": str(source)})
    typer.echo(f"plot: {plot}", err=True)


@probe.command("vision")
def vision_probe(images: Annotated[int, typer.Option(min=1, help="Generated images (a third authentic).")] = 48,
                 model: VlmOpt = None, seed: Annotated[int, typer.Option(min=0, help="Generator seed.")] = 0,
                 device: DeviceOpt = None, out: OutOpt = Path("probes"), fmt: FormatOpt = Format.table) -> None:
    """Where do a VLM's tampered-region image tokens separate from the authentic ones?"""
    vlm = _vlm(model, models.device(device))
    items = vision.items(vlm, forgery.generate(images, seed=seed))
    scores = probing.probe(probing.collect(vlm.model, items, models.device(device)))
    emit(_curve_rows(scores), fmt, title=f"tampered image tokens, {len(items)} forgeries: probe AUC per layer")
    plot = _save(out, "vision", scores, f"tampered-region tokens ({len(items)} forgeries)",
                 {"forgeries": len(items), "model": str(model or "tiny random Idefics3")})
    typer.echo(f"plot: {plot}", err=True)


def _accuracy_row(what: str, before: float | None, after: list[int]) -> dict:
    low, high = wilson(float(np.mean(after)), len(after))
    return {"what": what, "before": None if before is None else round(before, 3),
            "after": round(float(np.mean(after)), 3), "after 95% CI": f"[{float(low):.2f}, {float(high):.2f}]",
            "n": len(after)}


@forensic.command("train")
def train(images: Annotated[int, typer.Option(min=1, help="Generated training images.")] = 256,
          test_images: Annotated[int, typer.Option(
              min=1, help="Generated held-out images (photographs never trained on).")] = 200,
          steps: Annotated[int, typer.Option(min=1, help="Relay optimiser steps.")] = 300,
          batch: Annotated[int, typer.Option(min=1, help="Images per step.")] = 8,
          read_layer: Annotated[int | None, typer.Option(help="Layer the relay reads (default: the vision "
                                                             "probe's peak before the write layers).")] = None,
          model: VlmOpt = None, seed: Annotated[int, typer.Option(min=0, help="Generator and split seed.")] = 0,
          out: OutOpt = Path("probes"), fmt: FormatOpt = Format.table) -> None:
    """Train the relay on authenticity labels (the VLM frozen); held-out accuracy and late-layer probe AUC,
    before/after. Training and held-out images come from disjoint photographs."""
    vlm = _vlm(model, "cpu")
    layers = len(vlm.text_layers)
    train_photos, test_photos = forgery.split_photos(seed)
    train_set = forgery.generate(images, seed=seed, photos=train_photos)
    test_set = forgery.generate(test_images, seed=seed + 1, photos=test_photos)
    probe_items = vision.items(vlm, test_set)
    before = probing.probe(probing.collect(vlm.model, probe_items))
    write = gfm.write_layers(layers)
    read, why = (read_layer, "as asked") if read_layer else gfm.read_layer_from(before, min(write))
    typer.echo(f"read layer {read}: {why}", err=True)
    relay = gfm.ForensicRelay(vlm.model.config.text_config.hidden_size, read, write)
    result = gfm.train(vlm, relay, train_set, test_set, steps=steps, batch=batch, seed=seed)
    after_tokens = []
    for item in probe_items:  # the relay needs each image's token positions
        relay.at(np.flatnonzero(item.inputs["input_ids"][0].numpy() == vlm.image_token_id))
        after_tokens.append(probing.collect(vlm.model, [item]))
    after = probing.probe(probing.Tokens(np.concatenate([t.states for t in after_tokens], axis=1),
                                         np.concatenate([t.labels for t in after_tokens]),
                                         np.concatenate([np.full(len(t.labels), i)
                                                         for i, t in enumerate(after_tokens)])))
    rows = [_accuracy_row("authenticity accuracy (held out)", result.accuracy_before, result.correct_after),
            _accuracy_row("authenticity accuracy (training images)", None, gfm.correct(vlm, relay, train_set))]
    rows += [{"what": f"probe AUC, layer {b.layer}", "before": round(b.auc, 3), "after": round(a.auc, 3)}
             for b, a in zip(before, after, strict=True) if b.layer >= min(write)]
    emit(rows, fmt, title=f"Gated Forensic Memory: read layer {read}, write layers {list(write)}, {steps} steps")
    out.mkdir(parents=True, exist_ok=True)
    probing.plot({"before": before, "after": after}, out / "gfm.png", "probe AUC with and without the relay")
    (out / "gfm.json").write_text(json.dumps({"read_layer": read, "write_layers": list(write), "steps": steps,
                                              "batch": batch, "held_out_photos": list(test_photos),
                                              "losses": result.losses, "rows": rows}, indent=1))
    typer.echo(f"plot: {out / 'gfm.png'}", err=True)
