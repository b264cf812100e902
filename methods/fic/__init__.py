"""Found in Conversation: sharded multi-turn evaluation (settings, rule-based user simulator, scoring, P/A/U) and
view-asymmetric self-distillation (``neurips26 fic eval|distill``)."""
