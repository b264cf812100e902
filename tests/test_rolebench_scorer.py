"""The role-fidelity scorer, trained and tested on the real RoleBench (held-out questions of each role)."""

from __future__ import annotations

from pathlib import Path

import datasets
import numpy as np
import pytest
from neurips26.corpora.rolebench_unlearn import build as rb
from neurips26.corpora.rolebench_unlearn import splits
from neurips26.methods.unlearn import scorer

N_ROLES, N_TRAIN, N_TEST = 16, 12, 4  # a subsample, so the test embeds ~260 texts on a CPU


@pytest.fixture(scope="module")
def real(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> datasets.DatasetDict:
    out = tmp_path_factory.mktemp("real") / "rolebench_unlearn"
    rb.build(raw=shared_data / "rolebench", out=out)
    return datasets.load_dataset(str(out), "records")


def subsample(rows: list[dict], roles: list[str], per_role: int) -> tuple[list[str], list[str]]:
    texts, labels = [], []
    for role in roles:
        refs = [ref for r in rows if r["role"] == role for ref in r["references"]][:per_role]
        texts += refs
        labels += [role] * len(refs)
    return texts, labels


def test_scorer_identifies_roles_on_held_out_questions(real: datasets.DatasetDict, tmp_path: Path) -> None:
    roles = splits.role_order({r["role"] for r in real["train"]})[:N_ROLES]
    train_texts, train_roles = subsample(real["train"].to_list(), roles, N_TRAIN)
    test_texts, test_roles = subsample(real["test"].to_list(), roles, N_TEST)
    model = scorer.train(train_texts, train_roles, test_texts, test_roles)
    assert model.info["n_test"] == N_ROLES * N_TEST and model.info["chance"] == 1 / N_ROLES
    print(f"scorer: {N_ROLES} roles, held-out accuracy {model.info['accuracy']:.3f}, "
          f"mean P(true role) {model.info['test_fidelity']:.3f}")
    assert model.info["accuracy"] >= 0.5  # chance is 1/16
    assert model.info["test_fidelity"] > 4 / N_ROLES
    p = model.proba(test_texts[:8])
    assert p.shape == (8, N_ROLES) and np.allclose(p.sum(axis=1), 1)
    fidelity = model.fidelity(test_texts[:2] * 2, test_roles[:2] + ["no such role", test_roles[-1]])
    assert fidelity[:2] == pytest.approx([p[i, model.roles.index(test_roles[i])] for i in range(2)])
    assert fidelity[2] == 0.0
    model.save(tmp_path / "scorer.npz")
    again = scorer.RoleScorer.load(tmp_path / "scorer.npz")
    assert again.roles == model.roles and again.info == model.info
    assert np.allclose(again.proba(test_texts[:4]), model.proba(test_texts[:4]))


def test_chinese_scorer_reads_character_ngrams_and_refuses_other_languages(tmp_path: Path) -> None:
    from .test_rolebench_build import ZH_VOICES, zh_release

    zh_release(tmp_path / "raw")
    rb.build(raw=tmp_path / "raw", out=tmp_path / "rolebench_unlearn")
    folder = scorer.for_folder(tmp_path / "rolebench_unlearn")
    assert list(folder.languages) == ["zh"]
    zh = folder.scorer("zh")
    info = scorer.describe(folder)["languages"]["zh"]
    print(f"scorer zh: {info['roles']} roles, held-out accuracy {info['accuracy']:.3f} (chance {info['chance']:.3f})")
    assert zh.features == scorer.FEATURES["zh"] and info["roles"] == 3 and info["n_test"] > 0
    assert info["accuracy"] > info["chance"]
    texts = [voice.format("明天再说") for voice in ZH_VOICES.values()]  # unseen content in each role's voice
    p = zh.proba(texts)
    assert [zh.roles[i] for i in p.argmax(1)] == list(ZH_VOICES)
    assert folder.fidelity(texts, list(ZH_VOICES), ["zh"] * 3) == pytest.approx(
        [p[i, zh.roles.index(r)] for i, r in enumerate(ZH_VOICES)])
    with pytest.raises(scorer.ScorerError, match="trained for zh; it cannot score language 'en'"):
        folder.fidelity(["Ahoy there"], ["孙悟空"])  # no language given: English
    with pytest.raises(scorer.ScorerError, match="language 'fr'"):
        folder.scorer("fr")
