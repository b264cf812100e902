"""Encoders: the CPU descriptor and its colour lexicon; CLIP and SigLIP through transformers (tiny random models)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from neurips26.methods.frameselect import ENCODERS
from neurips26.methods.frameselect.encoders import get_encoder

WORDS = ["[PAD]", "[UNK]", "<s>", "</s>", "the", "red", "blue", "car", "bus", "when", "does", "stop", "?"]


def image(colour: tuple[int, int, int] | None = None, seed: int = 0) -> np.ndarray:
    """A grey-green street-like frame with, optionally, a coloured box in it."""
    rng = np.random.default_rng(seed)
    img = np.clip(np.full((48, 64, 3), (80, 110, 70)) + rng.integers(-10, 11, (48, 64, 3)), 0, 255)
    if colour is not None:
        img[20:32, 10:30] = colour
    return img.astype(np.uint8)


def test_descriptor_is_unit_norm_deterministic_and_batch_free() -> None:
    enc = get_encoder("descriptor")
    images = [image(seed=s) for s in range(3)] + [image((200, 40, 40))]
    f = enc.encode_images(images)
    assert f.shape == (4, enc.dim) and f.dtype == np.float32
    assert np.allclose(np.linalg.norm(f, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(f, enc.encode_images(images))
    assert np.allclose(f[3], enc.encode_images(images[3:])[0])
    assert enc.encode_images([]).shape == (0, enc.dim)


def test_descriptor_query_is_a_colour_word_projection() -> None:
    enc = get_encoder("descriptor")
    q = enc.encode_text("When does the red car stop?")
    assert q is not None and np.isclose(np.linalg.norm(q), 1.0)
    plain, red, blue = enc.encode_images([image(), image((200, 40, 40)), image((40, 80, 200))])
    assert red @ q > plain @ q and red @ q > blue @ q  # the frame showing red answers "red"
    qb = enc.encode_text("the blue bus")
    assert blue @ qb > red @ qb
    burst = image((255, 220, 60))
    collide = enc.encode_text("Does any vehicle collide with another vehicle?")  # a cue word for the drawn burst
    assert collide is not None and enc.encode_images([burst])[0] @ collide > max(plain @ collide, red @ collide)


def test_descriptor_grounds_a_question_without_lexicon_words_by_meaning() -> None:
    from neurips26.methods.frameselect.encoders.descriptor import CONCEPTS, grounding

    enc = get_encoder("descriptor")
    question = "Which road user is involved in a vehicle stopped in a traffic lane?"  # no colour or cue word
    weights = grounding(question)
    assert weights.shape == (len(CONCEPTS),) and np.isclose(weights.sum(), 1.0)
    assert list(CONCEPTS)[int(np.argmax(weights))].endswith("hazard lights blinking")
    q = enc.encode_text(question)
    assert np.isclose(np.linalg.norm(q), 1.0) and np.array_equal(q, enc.encode_text(question))
    plain, amber, red = enc.encode_images([image(), image((255, 170, 0)), image((200, 40, 40))])
    assert amber @ q > max(plain @ q, red @ q)  # the frame with the drawn hazard blinkers answers it
    anomaly = enc.encode_text("Is there a traffic anomaly in this video?")
    assert not np.allclose(anomaly, q) and np.isclose(np.linalg.norm(anomaly), 1.0)


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A randomly initialised CLIP and SigLIP (2-layer towers, 32x32 images) saved as Hub-style folders."""
    torch = pytest.importorskip("torch")
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import (
        CLIPConfig,
        CLIPImageProcessorPil,
        CLIPModel,
        PreTrainedTokenizerFast,
        SiglipConfig,
        SiglipImageProcessorPil,
        SiglipModel,
    )

    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 2), ("</s>", 3)])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]", bos_token="<s>",
                                        eos_token="</s>")
    tower = {"hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2, "num_attention_heads": 2}
    text = {**tower, "vocab_size": len(WORDS), "max_position_embeddings": 16, "pad_token_id": 0, "bos_token_id": 2,
            "eos_token_id": 3}
    vision = {**tower, "image_size": 32, "patch_size": 8}
    root = tmp_path_factory.mktemp("tiny-encoders")
    torch.manual_seed(0)
    built = {
        "clip": (CLIPModel(CLIPConfig(text_config=text, vision_config=vision, projection_dim=16)),
                 CLIPImageProcessorPil(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})),
        "siglip": (SiglipModel(SiglipConfig(text_config=text, vision_config=vision)),
                   SiglipImageProcessorPil(size={"height": 32, "width": 32})),
    }
    out = {}
    for name, (model, processor) in built.items():
        out[name] = root / name
        model.save_pretrained(out[name])
        tokenizer.save_pretrained(out[name])
        processor.save_pretrained(out[name])
    return out


@pytest.mark.parametrize("family,dim", [("clip", 16), ("siglip", 32)])
def test_dual_encoders_unit_norm_batching_and_determinism(tiny_models: dict[str, Path], family: str,
                                                          dim: int) -> None:
    images = [image((200, 40, 40), seed=s) for s in range(5)] + [image()]
    small = get_encoder(family, model=tiny_models[family], batch_size=2)
    f = small.encode_images(images)
    assert f.shape == (6, dim) and f.dtype == np.float32
    assert np.allclose(np.linalg.norm(f, axis=1), 1.0, atol=1e-5)
    again = get_encoder(family, model=tiny_models[family], batch_size=6)
    assert np.allclose(f, again.encode_images(images), atol=1e-5)  # batching does not change the result
    q = small.encode_text("when does the red car stop ?")
    assert q.shape == (dim,) and np.isclose(np.linalg.norm(q), 1.0, atol=1e-5)
    assert np.allclose(q, again.encode_text("when does the red car stop ?"), atol=1e-6)
    assert not np.allclose(q, small.encode_text("the blue bus"), atol=1e-3)
    assert small.key == f"{family}:{tiny_models[family]}"
    import torch

    assert small.device == ("cuda" if torch.cuda.is_available() else "cpu")  # CUDA when present


def test_registered_encoders_and_a_missing_model_is_named(tmp_path: Path) -> None:
    assert {"descriptor", "clip", "siglip"} <= set(ENCODERS)
    with pytest.raises(OSError, match="clip encoder: cannot load .*nowhere"):
        get_encoder("clip", model=tmp_path / "nowhere").encode_text("the red car")
    with pytest.raises(KeyError, match="unknown encoder 'resnet'"):
        get_encoder("resnet")
    with pytest.raises(ValueError, match="encoder 'descriptor' takes no option.*model; it takes: none"):
        get_encoder("descriptor", model="openai/clip-vit-base-patch32")
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        get_encoder("siglip", model=tmp_path, batch_size=0)


def test_pool_with_a_dual_encoder_and_a_cache_never_loads_the_model_twice(tiny_models: dict[str, Path],
                                                                          tmp_path: Path) -> None:
    pytest.importorskip("av")
    import random
    import shutil

    from neurips26.corpora.video.render import write_mp4
    from neurips26.corpora.video.scene import Scene, random_layout
    from neurips26.methods.frameselect import build_pool, select

    video = write_mp4(Scene("street", 2.0, 10, 64, 48, random_layout(random.Random(0), "CAM 2")), tmp_path / "s.mp4")
    model = shutil.copytree(tiny_models["clip"], tmp_path / "model")
    first = build_pool([video], query="the red car", encoder="clip", candidate_fps=2.0, cache=tmp_path / "c",
                       model=model, batch_size=3)
    assert first.features.shape == (4, 16) and first.query_features.shape == (16,)
    assert len(select("mmr", first, 2).indices) == 2
    shutil.rmtree(model)  # a second run must not need it
    again = build_pool([video], query="the red car", encoder="clip", candidate_fps=2.0, cache=tmp_path / "c",
                       model=model, batch_size=3)
    assert np.array_equal(first.features, again.features)
    assert np.array_equal(first.query_features, again.query_features)
