"""The intervention position_bias names (cyclic option permutation) and its same-cost random controls."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from neurips26.methods.diagnostics import interventions as iv

from neurips26 import models

PROMPT = ("Ordinance section 14-1:\nEvery person conducting a business shall obtain an occupation tax certificate.\n\n"
          "Question: Which regulatory domain does this section belong to?\nA. business licensing\nB. utilities\n"
          "C. buildings\nD. health and sanitation\nAnswer:")


def test_the_option_block_is_found_and_rendered_in_any_order() -> None:
    block = iv.option_block(PROMPT)
    assert block is not None and block.letters == ("A", "B", "C", "D") and block.texts[3] == "health and sanitation"
    assert PROMPT[block.start:block.end] == block.render(range(4)) and PROMPT[block.end:] == "Answer:"
    assert block.render([3, 0, 1, 2]).startswith("A. health and sanitation\nB. business licensing\n")
    assert iv.option_block("A. only one option\nAnswer:") is None and iv.option_block("no options") is None
    listed = PROMPT.replace("Every person", "A. Every person\nB. Any firm\nC. Each")  # a lettered list in the text
    assert iv.option_block(listed).texts == block.texts


def test_cyclic_orders_put_every_option_at_every_letter_once_and_cancel_a_letter_preference() -> None:
    orders = iv.cyclic_orders(4)
    assert orders[0] == [0, 1, 2, 3] and orders[1] == [3, 0, 1, 2]  # order j: option i at letter (i + j) mod k
    for option in range(4):
        assert sorted(order.index(option) for order in orders) == [0, 1, 2, 3]
    prior, content = np.array([3.0, 0.0, -1.0, -2.0]), np.array([0.0, 0.5, 0.1, 0.2])
    scores = np.array([[prior[p] + content[order[p]] for p in range(4)] for order in orders])
    assert scores[0].argmax() == 0  # as asked, the letter preference wins
    averaged = iv.cyclic_average(scores)
    assert np.allclose(averaged - averaged.mean(), content - content.mean()) and averaged.argmax() == 1


def test_token_shuffles_move_exactly_the_asked_number_of_tokens() -> None:
    rng = np.random.default_rng(0)
    ids = list(range(100, 130))
    for count in (2, 5, 30):
        out = iv.shuffle_tokens(ids, count, rng)
        assert sorted(out) == ids and iv.changed_tokens(ids, out) == count
    repeated = [7, 7, 7, 8, 9, 7, 10, 11, 12, 13]  # a value repeated, as "." and newlines are in an option block
    for _ in range(20):
        out = iv.shuffle_tokens(repeated, 10, rng)
        assert sorted(out) == sorted(repeated) and iv.changed_tokens(repeated, out) == 10
    assert iv.shuffle_tokens(ids, 1, rng) == ids and iv.changed_tokens([1, 2], [1, 2, 3]) == 1


@pytest.fixture(scope="module")
def scorer(one_torch_thread: None) -> iv.LetterScorer:
    transformers = pytest.importorskip("transformers")
    folder = models.default_model_dir()
    return iv.LetterScorer(transformers.AutoModelForCausalLM.from_pretrained(str(folder)),
                           transformers.AutoTokenizer.from_pretrained(str(folder)), "ABCDE")


@torch.no_grad()
def test_the_cached_batch_scores_every_variant_as_a_plain_forward_pass_would(scorer: iv.LetterScorer) -> None:
    block = iv.option_block(PROMPT)
    scored = iv.permutation_and_controls(scorer, PROMPT, np.random.default_rng(0))
    assert set(scored.arms) == {"named", *iv.CONTROLS} and all(len(v) == 3 for v in scored.changed.values())
    plain = []
    for order in iv.cyclic_orders(4):  # each permuted prompt run whole, without the prefix cache
        ids = scorer.encode(PROMPT[:block.start]) + scorer.encode(block.render(order)) + scorer.encode("Answer:")
        plain.append(scorer.model(torch.tensor([ids])).logits[0, -1].log_softmax(-1)[scorer.letter_ids[:4]].numpy())
    assert np.allclose(scored.base, plain[0], atol=1e-4)
    assert np.allclose(scored.arms["named"], iv.cyclic_average(np.array(plain)), atol=1e-4)
    named, shuffled = np.mean(scored.changed["named"]), np.mean(scored.changed["random_tokens"])
    assert named > 0 and abs(named - shuffled) <= 1  # the same prompt change size (equal tokens may swap)
