"""Transitional: the build functions of resources whose build module does not register itself yet.

Imported last by :data:`neurips26.corpora.RESOURCES` (after every build module); each resource below whose
module left ``build`` unregistered is registered under its name here. Delete an entry once its module uses
``@RESOURCES.register(...)``; delete this module when none is left.
"""

from __future__ import annotations

import importlib

from neurips26.corpora import RESOURCES

LEGACY = {"locus": "neurips26.corpora.locus.build", "tar": "neurips26.corpora.tar.build",
          "clovr": "neurips26.corpora.clovr.build", "frameselect": "neurips26.corpora.frameselect.build"}

for _name, _module in LEGACY.items():
    if _name not in RESOURCES:
        RESOURCES.register(_name)(importlib.import_module(_module).build)
