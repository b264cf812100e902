"""Label-shift importance weights with finite-sample confidence regions."""
