"""PushT: 206 real human demonstrations of pushing a T block onto a target, as a Hub-ready folder."""
