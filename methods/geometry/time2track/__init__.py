"""Time2Track: individualised 4D heart motion from the ECG, one module per component of the method.

* :mod:`.data`: the subjects (real PhysioNet ECG leads; generated delays, kinematics and motion);
* :mod:`.wavelet`: the learnable wavelet decomposition of the ECG and the electromechanical delay it gives;
* :mod:`.tokens`: the delay-aware token embeddings;
* :mod:`.diffusion`: the conditional motion diffusion model (transformer denoiser, DDPM training, DDIM sampling);
* :mod:`.baseline`: the generic motion-diffusion baseline without delay conditioning;
* :mod:`.train`: ``neurips26 geometry train time2track`` (both arms at equal optimiser steps, scored with
  :mod:`..motion`).
"""
