"""Fractal-G: a plug-in for a small U-Net that refines the boundary on a non-uniform graph.

One module per component, named as the paper names them:

* :mod:`.router` — the **Uncertainty-Aware Fission Router**: the grid becomes a quadtree of cells, split (fission)
  where the backbone's predictive uncertainty is highest, so nodes are dense at boundaries;
* :mod:`.graph` — the **Area-Aware Continuous Neighborhood Graph**: touching cells are neighbours, messages carry
  continuous relative positions and are averaged with each neighbour's physical area as its weight;
* :mod:`.renderer` — the **Topology-Aware Implicit Renderer**: the node features become a continuous field, read
  at any point by interpolating over the containing node's graph neighbourhood only.

:mod:`.unet` is the backbone, :mod:`.model` puts the plug-in on it, :mod:`.data` reads the generated shapes
(:mod:`..segdata`) or a folder of image/mask PNGs, :mod:`.fit` trains, :mod:`.scoring` scores across
resolutions and :mod:`.train` registers ``neurips26 geometry train fractal-g``.
"""
