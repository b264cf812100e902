"""Shared video code for the video resources (TAR, CLoVR-Bench).

- ``frames``: frame access (keyframe index, seek + decode forward, cache) and sampling policies;
- ``scene`` and ``render``: the procedural CCTV generator both resources script their clips with;
- ``fields`` and ``ingest``: release fields (options, answers, spans) and the videos a build references
  (found, hash-checked, probed, copied or embedded), plus the build report;
- ``lmeval``: what the video lm-eval tasks share (frames per document, ``<image>`` placeholders);
- ``tiny_vlm``: a randomly initialised Idefics3 model for end-to-end tests;
- ``cli``: ``neurips26 generate``.
"""
