"""HOLMES: training-free cross-long-video reasoning as evidence-slot filling over a typed binding graph.

CLoVR-Bench's baseline method: plan the evidence slots that discriminate a question's options
(:mod:`.slots`), localise evidence with risk-conditioned search policies over FrameSelect pools and
record a coverage certificate for every search that found nothing (:mod:`.search`), bind what is seen
into a typed graph of videos, entities, attributes, events and times (:mod:`.graph`), verify the
cross-video bindings and audit constraints, and answer through hard graph-readout gates
(:mod:`.readout`). Perception is pluggable (:mod:`.perception`): the generator's ground-truth scene
records (an upper bound), the descriptor (colour blobs on the FrameSelect thumbnails), learned (classifiers
trained on other generated videos, :mod:`.learned`), any VLM answerer; so is the planner (:mod:`.planner`: the
generator's words, the MiniLM reader, or a language model writing the plan).
"""

from .core import CLOVR_METHODS, PERCEPTION

__all__ = ["CLOVR_METHODS", "PERCEPTION"]
