"""Fourier Contour Learning: per-slice elliptic Fourier coefficients of the left-ventricular cavity predicted from
short-axis cine images, with areas and volumes taken from the coefficients in closed form.

One module per component, named as the paper names them:

* :mod:`.encoder` -- the CNN encoder (image -> feature tokens);
* :mod:`.anatomy_decoder` -- the anatomy-query decoder (learned queries, one per structure, attend to the tokens);
* :mod:`.cross_slice` -- cross-slice attention (the slices of one stack exchange information);
* :mod:`.measures` -- the differentiable area and volume from the coefficients, and contours rendered as masks;
* :mod:`.model` assembles them; :mod:`.losses` holds the mask, measurement (volume) and unlabeled consistency terms;
* :mod:`.unet` -- the dense U-Net baseline; :mod:`.data` -- cine stacks rendered from the cardiac phantom
  (generated, exact ground truth); :mod:`.experiment` -- training both and scoring; :mod:`.train` -- the registered
  ``neurips26 geometry train fourier-contours``.
"""
