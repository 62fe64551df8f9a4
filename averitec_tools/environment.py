"""On/off switches read from the environment: one reading of "true" for every such variable
the package reads (``AVERITEC_NO_DOWNLOAD``, ``AVERITEC_NO_CACHE``, the Hugging Face offline
variables), the values huggingface_hub accepts, in any case, surrounding spaces ignored.

Example:
    >>> is_true(" On "), is_true("0"), is_true(None)
    (True, False, False)
"""

from __future__ import annotations

import os

#: The values read as "true" (lower-cased, stripped).
TRUE_VALUES = frozenset({"1", "true", "yes", "on"})


def is_true(value: str | None) -> bool:
    """Whether an environment variable's ``value`` (``None``: unset) means "on"."""
    return value is not None and value.strip().lower() in TRUE_VALUES


def env_flag(name: str) -> bool:
    """Whether the environment variable ``name`` is set to a true value (:func:`is_true`)."""
    return is_true(os.environ.get(name))


__all__ = ["TRUE_VALUES", "env_flag", "is_true"]
