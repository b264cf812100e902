"""Errors raised on bad label-shift input; all are :class:`~neurips26.errors.UserError` subclasses."""

from __future__ import annotations

from neurips26.errors import UserError


class LabelShiftError(UserError):
    """Bad input to a label-shift estimator (shapes, labels, conditioning)."""


class LabelSetError(LabelShiftError):
    """Predictions or probabilities use labels that the source labels do not."""


class EmptyClassError(LabelShiftError):
    """A class has no source examples, so its weight is not identified."""


class SingularConfusionError(LabelShiftError):
    """The confusion matrix is singular or too ill-conditioned to invert."""


class EmptyRegionError(LabelShiftError):
    """No confusion matrix and target marginal inside the boxes fit label shift."""
