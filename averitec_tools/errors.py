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
        detail: Facts about the reference side (its path, claim count, ids, texts). The
            command line shows them; a hosted leaderboard keeps them out of what a team
            sees, so that errors do not reveal hidden gold data.

    Example:
        >>> str(UserError("preds.json: claim 3: unknown label 'True'", hint="use one of: Supported"))
        "preds.json: claim 3: unknown label 'True' (use one of: Supported)"
        >>> str(UserError("p.json: 2 predictions, not one per reference claim", detail="gold.json has 3 claims"))
        'p.json: 2 predictions, not one per reference claim (gold.json has 3 claims)'
    """

    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None, detail: str | None = None) -> None:
        self.message = message
        self.hint = hint
        self.detail = detail
        text = f"{message} ({detail})" if detail else message
        super().__init__(f"{text} ({hint})" if hint else text)


class ResourceError(UserError):
    """A resource (NLTK data, model weights, an index) is missing or unusable."""


__all__ = ["ResourceError", "UserError"]
