"""NLTK's Porter stemmer with its consonant tests done in one pass, on every NLTK version.

Up to 3.9.1, NLTK decides whether a ``y`` is a consonant by recursing over the ``y``\\ s
before it, once per position asked about: ``_measure`` is then quadratic in the length
of a run of ``y``\\ s, and a token of about a thousand of them raises ``RecursionError``
(one such word in a submission used to abort a whole ``averitec score`` run). NLTK 3.10
computes the same classification iteratively. :func:`linear_porter` subclasses the
installed ``PorterStemmer`` with that one-pass classification, so the stems are exactly
NLTK's (``tests/test_meteor.py`` compares them with NLTK 3.9.1's own stemmer) and the
cost is linear in a word's length whichever NLTK is installed.

Example:
    >>> from nltk.stem.porter import PorterStemmer
    >>> stemmer = linear_porter(PorterStemmer)()
    >>> stemmer.stem("running"), stemmer.stem("syzygy"), len(stemmer.stem("y" * 5000))
    ('run', 'syzygi', 5000)
"""

from __future__ import annotations

from typing import Any

_VOWELS = frozenset("aeiou")


def consonant_flags(word: str) -> list[bool]:
    """Porter's consonant test for every letter of ``word``, left to right.

    A letter is a consonant unless it is a vowel, or a ``y`` that follows a consonant
    (a ``y`` that starts the word is a consonant).

    Example:
        >>> consonant_flags("toy"), consonant_flags("syzygy")
        ([True, False, True], [True, False, True, False, True, False])
    """
    flags: list[bool] = []
    previous = False
    for i, letter in enumerate(word):
        if letter in _VOWELS:
            previous = False
        elif letter == "y":
            previous = True if i == 0 else not previous
        else:
            previous = True
        flags.append(previous)
    return flags


def linear_porter(base: type[Any]) -> type[Any]:
    """A subclass of NLTK's ``PorterStemmer`` class ``base`` whose consonant tests are linear.

    Overrides the three methods that classify letters (``_is_consonant``, ``_measure``,
    ``_contains_vowel``) with definitions equal to NLTK's; every rule of the algorithm
    stays NLTK's own.
    """

    class LinearPorterStemmer(base):  # type: ignore[misc,valid-type]
        def _is_consonant(self, word: str, i: int) -> bool:
            # NLTK: a y is the negation of the letter before it; walk the run instead of recursing
            negate = False
            while i > 0 and word[i] == "y":
                negate = not negate
                i -= 1
            letter = word[i]
            consonant = letter not in _VOWELS  # a y at position 0 is a consonant too
            return consonant != negate

        def _measure(self, stem: str) -> int:
            return "".join("c" if c else "v" for c in consonant_flags(stem)).count("vc")

        def _contains_vowel(self, stem: str) -> bool:
            return not all(consonant_flags(stem))

    LinearPorterStemmer.__qualname__ = LinearPorterStemmer.__name__ = f"Linear{base.__name__}"
    return LinearPorterStemmer


__all__ = ["linear_porter"]
