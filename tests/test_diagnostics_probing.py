"""Layer-wise probing finds a planted linear feature at the layer it was planted in; the LOCUS penalty labels."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from neurips26.methods.diagnostics import penalty, probing
from transformers import LlamaConfig, LlamaForCausalLM

from neurips26 import models


def tiny_llama(layers: int = 4, dim: int = 32, vocab: int = 64) -> LlamaForCausalLM:
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=vocab, hidden_size=dim, intermediate_size=2 * dim, num_hidden_layers=layers,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64)
    return LlamaForCausalLM(config).eval()


def plant(model: LlamaForCausalLM, layer: int, strength: float = 3.0) -> dict[str, torch.Tensor]:
    """Add ``strength * v`` to the labelled tokens' states at the output of block ``layer`` (hidden-state index
    ``layer``) and take it away again at the next block's output: the feature lives at that layer only."""
    state: dict[str, torch.Tensor] = {}
    direction = torch.nn.functional.normalize(torch.randn(model.config.hidden_size, generator=torch.Generator()
                                                          .manual_seed(1)), dim=0) * strength

    def shift(sign: float):
        def hook(module, args, output):
            hidden = output[0] if isinstance(output, tuple) else output
            hidden = hidden + sign * state["labels"][None, :, None] * direction
            return (hidden, *output[1:]) if isinstance(output, tuple) else hidden
        return hook

    model.model.layers[layer - 1].register_forward_hook(shift(1.0))
    model.model.layers[layer].register_forward_hook(shift(-1.0))
    return state


def test_probing_recovers_a_planted_feature_at_its_layer() -> None:
    model, layer = tiny_llama(layers=4), 2
    state = plant(model, layer)
    rng = np.random.default_rng(0)
    items = []
    for _ in range(12):
        ids = torch.from_numpy(rng.integers(0, 64, (1, 24)))
        labels = rng.integers(0, 2, 24)
        items.append(probing.Item({"input_ids": ids}, labels))
    tokens_by_doc = []
    for item in items:  # the hooks read the labels of the document being run
        state["labels"] = torch.tensor(item.labels, dtype=torch.float32)
        tokens_by_doc.append(probing.collect(model, [item]))
    tokens = probing.Tokens(np.concatenate([t.states for t in tokens_by_doc], axis=1),
                            np.concatenate([t.labels for t in tokens_by_doc]),
                            np.concatenate([np.full(len(t.labels), i) for i, t in enumerate(tokens_by_doc)]))
    scores = probing.probe(tokens, folds=4, n_boot=50)
    assert [s.layer for s in scores] == list(range(model.config.num_hidden_layers + 1))
    top = probing.peak(scores)
    assert top.layer == layer and top.auc > 0.95 and top.low <= top.auc <= top.high
    assert scores[0].auc < 0.7 and scores[1].auc < 0.7  # before the plant: labels are random
    reading = probing.shape(scores)
    assert not reading.flat and reading.peak == layer and reading.mid and "mid-layer" in reading.describe()
    with pytest.raises(ValueError, match="both labels"):
        probing.probe(probing.Tokens(tokens.states, np.zeros_like(tokens.labels), tokens.groups))


def test_penalty_clause_labels_follow_the_fines_rules() -> None:
    text = ("Dogs shall be kept on a leash. Any person violating this section shall be fined not more than "
            "$500.00. The animal control officer may impound dogs.")
    spans = penalty.penalty_spans(text)
    assert [text[a:b] for a, b in spans] == ["Any person violating this section shall be fined not more than $500.00."]
    transformers = pytest.importorskip("transformers")
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(models.default_model_dir()))
    (item,) = penalty.items([text, "No penalty is stated here. Nor here."], tokenizer)
    words = tokenizer.convert_ids_to_tokens(item.inputs["input_ids"][0].tolist())
    inside = "".join(w for w, label in zip(words, item.labels, strict=True) if label == 1)
    assert "fined" in inside and "$500" in inside.replace("Ġ", "") and "leash" not in inside


def test_a_curve_flat_within_its_noise_names_no_peak() -> None:
    flat = [probing.LayerScore(layer, auc, auc - 0.05, auc + 0.05) for layer, auc in enumerate([0.56, 0.57, 0.58,
                                                                                                 0.57])]
    reading = probing.shape(flat)
    assert reading.flat and reading.peak is None and not reading.mid and "flat" in reading.describe()
    assert probing.shape([probing.LayerScore(0, 0.6, float("nan"), float("nan"))]).flat  # no interval: no peak
    rising = [probing.LayerScore(layer, auc, auc - 0.02, auc + 0.02) for layer, auc in enumerate([0.6, 0.7, 0.9])]
    assert probing.shape(rising).peak == 2 and not probing.shape(rising).mid  # a peak at the last layer
    fading = [probing.LayerScore(layer, auc, auc - 0.02, auc + 0.02) for layer, auc in enumerate([0.6, 0.9, 0.89])]
    assert probing.shape(fading).peak == 1 and not probing.shape(fading).mid  # the last layer is within the noise


def test_an_untrained_model_gives_a_flat_curve_on_random_labels() -> None:
    model = tiny_llama(layers=4)
    rng = np.random.default_rng(1)
    items = [probing.Item({"input_ids": torch.from_numpy(rng.integers(0, 64, (1, 24)))}, rng.integers(0, 2, 24))
             for _ in range(12)]
    reading = probing.shape(probing.probe(probing.collect(model, items), folds=3, n_boot=30))
    assert reading.flat and reading.peak is None


def test_rank_auc_is_sklearns_roc_auc() -> None:
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, 200)
    scores = np.round(rng.normal(size=200) + labels, 1)  # rounded: many ties
    assert probing.rank_auc(labels, scores) == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)
