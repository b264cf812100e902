"""Shared video code for the video resources (TAR, CLoVR-Bench).

- ``records``: what a video is, what a build checked and made (reports, ``BuildError``);
- ``selection`` and ``samplers``: candidate pools, selections and the selector registry, with the
  query-free ``uniform`` and ``fps`` selectors every task uses;
- ``decoder`` and ``frames``: frame access (keyframe index, seek + decode forward, caches) and sampling
  with a selector;
- ``scene`` and ``render``: the procedural CCTV generator both resources script their clips with;
- ``fields``, ``ingest`` and ``release``: release fields (options, answers, spans), the videos a build
  references (found, hash-checked, probed) and the folder written (copied or embedded videos, manifest),
  whose ``videos`` config ``release.video_paths`` reads back;
- ``builder``: the build both resources share (items kept or rejected, videos checked, folder and card written);
- ``tiny_vlm``: a randomly initialised Idefics3 model for end-to-end tests;
- ``cli``: ``neurips26 generate``.
"""
