"""User-facing errors.

Anything a user can cause (bad file, wrong format, unknown id) raises :class:`UserError`.
The CLI prints its message as one line on stderr and exits with :attr:`UserError.exit_code`
(2), never with a traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """An error caused by user input; the message must say what is wrong and where.

    Args:
        message: One line naming the file, line/claim id and the problem.
        hint: Optional second sentence saying how to fix it.

    Example:
        >>> str(UserError("preds.json: claim 3: unknown label 'True'", hint="use one of: Supported"))
        "preds.json: claim 3: unknown label 'True' (use one of: Supported)"
    """

    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(f"{message} ({hint})" if hint else message)


class ResourceError(UserError):
    """A resource (NLTK data, model weights, an index) is missing or unusable."""


__all__ = ["ResourceError", "UserError"]
