"""One web document of a knowledge store: a page retrieved for a claim.

The AVeriTeC 2024 shared-task store (and FEVER-8's) holds one file per claim,
``<claim_id>.json``, of JSON lines ``{claim_id, type, query, url, url2text}``; AVerImaTeC's
text stores hold the same kind of lines (the organisers' code reads ``url`` and
``url2text``). The claim id of a document is its file's name: the line's own ``claim_id``
field, where present, is not trusted over it (the organisers' readers never read it).

Example:
    >>> doc = StoreDocument.from_dict({"claim_id": 3, "type": "claim", "query": "q", "url": "u",
    ...                                "url2text": ["A.", "B."]}, where="3.json:1", claim_id=3)
    >>> doc.url2text, doc.to_dict()["claim_id"]
    (('A.', 'B.'), 3)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.records._fields import opt_str, str_list


@dataclass(frozen=True)
class StoreDocument:
    """One line of a store file.

    Attributes:
        claim_id: The claim the page was retrieved for (the file's name).
        type: How it was found (the 2024 store: the query's kind); ``None`` when absent.
        query: The search query that found it; ``None`` when absent.
        url: The page URL.
        url2text: The page's sentences.
    """

    claim_id: Any
    type: str | None
    query: str | None
    url: str
    url2text: tuple[str, ...]

    @classmethod
    def from_dict(cls, obj: Any, *, where: str, claim_id: Any) -> StoreDocument:
        """Normalise one parsed store line.

        Raises:
            UserError: not an object, ``url`` not a string, ``url2text`` not a list of
                strings, ``type``/``query`` neither string nor null (naming ``where``).
        """
        if not isinstance(obj, Mapping):
            raise UserError(f"{where}: expected a JSON object (a store document), found {type(obj).__name__}")
        url = obj.get("url")
        if not isinstance(url, str):
            raise UserError(f"{where}: field 'url' must be a string, found {type(url).__name__}")
        return cls(claim_id=claim_id, type=opt_str(obj, "type", where, ints=True),
                   query=opt_str(obj, "query", where), url=url, url2text=str_list(obj, "url2text", where))

    def to_dict(self) -> dict[str, Any]:
        """The upstream line (``url2text`` as a list)."""
        return {"claim_id": self.claim_id, "type": self.type, "query": self.query, "url": self.url,
                "url2text": list(self.url2text)}


__all__ = ["StoreDocument"]
