"""PushT dataset card and metadata: the template lives in ``cards/pusht.md``."""

from __future__ import annotations

from importlib import resources
from string import Template

from neurips26.hubfolder import ConfigSpec

from .records import BuildReport

META = {
    "name": "pusht",
    "pretty_name": "PushT: human demonstrations of pushing a T block onto a target",
    "description": "206 human teleoperated PushT demonstrations (Diffusion Policy) with actions, states, "
                   "keypoints, per-step coverage and reward, 96x96 frames, and the same episodes resampled to "
                   "5, 10 and 20 Hz, for robot action learning benchmarks.",
    "license": "mit",
    "license_url": "https://opensource.org/licenses/MIT",
    "url": "https://huggingface.co/datasets/neurips26/pusht",
    "version": "1.0.0",
    "task_categories": ["robotics"],
    "tags": ["robotics", "imitation-learning", "pusht", "flow-matching", "action-chunking"],
    "citation": "Chi et al., Diffusion Policy: Visuomotor Policy Learning via Action Diffusion, RSS 2023 "
                "(the demonstrations); FAFM and FreeAct, NeurIPS 2026 (the benchmark).",
    "rai": {
        "data_collection": "Human teleoperation of the PushT simulator with a mouse, recorded at 10 Hz by the "
                           "Diffusion Policy authors; no new demonstrations are collected.",
        "data_collection_type": ["Secondary Data Analysis"],
        "data_preprocessing_protocol": ["Frames rounded to uint8 and PNG-encoded; coverage and reward derived "
                                        "from the recorded states with the gym-pusht geometry; mixed-frequency "
                                        "variants by linear interpolation (angles unwrapped)."],
        "data_biases": ["One operator population and one task layout (fixed target pose)."],
        "data_limitations": ["Simulation only; most recorded demonstrations end at coverage below the 0.95 "
                             "success threshold of Diffusion Policy in this simulator (see the card)."],
        "data_use_cases": ["Imitation learning and action-representation research (action chunking, frequency-"
                           "aware flow matching, latent actions)."],
        "data_social_impact": "Low: a 2-D pushing task in simulation.",
        "personal_sensitive_information": ["None."],
        "data_release_maintenance_plan": "Rebuilt with `neurips26 build pusht --raw DIR`; manifest.json records "
                                         "input and shard digests.",
    },
}


def render_card(report: BuildReport, configs: list[ConfigSpec], source: str, repo: str = "pusht") -> str:
    """The card's prose with this build's counts filled in."""
    text = resources.files("neurips26.cards").joinpath("pusht.md").read_text(encoding="utf-8")
    return Template(text).substitute(
        repo=repo, source=source, episodes_in=report.episodes_in, episodes_kept=report.episodes_kept,
        episodes_rejected=report.episodes_rejected, train=report.train, test=report.test, steps=f"{report.steps:,}",
        frames=f"{report.frames:,}", replay_error=f"{report.replay_max_state_error:.2g}",
        replay_exact=report.replay_exact, successes=report.successes,
        final_low=f"{report.final_coverage_low:.2f}", final_high=f"{report.final_coverage_high:.2f}",
        config_table="\n".join(
            f"| `{c.name}` | {', '.join(f'{s} {c.rows(s):,}' for s in c.shards)} | {c.description} |"
            for c in configs))
