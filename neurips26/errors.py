"""The one error base class for expected failures.

Anything a user can cause (a missing file, a bad value, an unknown name, a model path that does
not exist) raises a subclass of :class:`UserError` with a message that names the file, field or
value. The CLI prints such errors as one line on stderr and exits with code 2; anything else is a
bug and keeps its traceback.

``UserError`` derives from ``ValueError`` so code written against the older per-module errors
(``except ValueError``) keeps working.
"""

from __future__ import annotations


class UserError(ValueError):
    """An expected failure caused by input: shown as one line, exit code 2."""


class UnknownNameError(UserError, KeyError):
    """A name that no registry entry has (a resource, selector, task, metric...)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""
