"""TAR (Traffic Anomaly Reasoning): video QA with reasoning traces over CCTV clips.

``build`` ingests a release (or the generator's output) into a Hub-ready folder,
``generate`` makes a small release procedurally, ``tasktypes`` is the registry
of the ten task types.
"""
