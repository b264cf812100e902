"""Resources whose build functions do not register themselves yet: registered here by name."""

from __future__ import annotations

from neurips26.corpora import RESOURCES
from neurips26.corpora.locus import build as locus
from neurips26.corpora.rolebench_unlearn import build as rolebench_unlearn

RESOURCES.register("locus")(locus.build)
RESOURCES.register("rolebench_unlearn")(rolebench_unlearn.build)
