"""CLoVR-Bench (Cross-Long-Video Reasoning): multiple-choice questions that span several long videos.

``build`` ingests a release (or the generator's output) into a Hub-ready folder,
``generate`` makes a small release procedurally, ``taxonomy`` holds the three
levels and the generator's tasks and subtasks.
"""
