"""Unposed surface reconstruction: a surface from views whose camera poses are unknown, one module per component.

* :mod:`.render`: views of a real mesh from random cameras (poses hidden from the method);
* :mod:`.prior`: the pretrained pointmap prior's interface (:class:`.prior.PointmapPrior`) and the declared
  stand-in used here (the renderer's depth with generated noise);
* :mod:`.surfels`: cameras recovered from the pointmaps alone, and per-pixel surfels;
* :mod:`.voting`: query-view-centric surfel voting, which picks each query view's reference views;
* :mod:`.rays` and :mod:`.ray_regressor`: the cross-attention ray regressor, a continuous coarse surface;
* :mod:`.raylet`: raylet refinement with analytic normals (local algebraic spheres);
* :mod:`.pipeline` (scenes and every arm's surface), :mod:`.experiment` (split, training, scoring) and
  :mod:`.train` (``neurips26 geometry train surface``).
"""
