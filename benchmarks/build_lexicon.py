"""Build ``averitec_tools/data/lexicon/``: Porter stems and WordNet synonym sets from NLTK 3.9.1.

Run under a real NLTK 3.9.1 (it refuses any other version), with ``NLTK_DATA`` holding
WordNet 3.0 (``corpora/wordnet``)::

    PYTHONPATH=.venv/nltk391:. NLTK_DATA=../shared/nltk_data \\
        python benchmarks/build_lexicon.py --data-dir ../shared/data   # make lexicon

The stem vocabulary is every lower-cased ``word_tokenize`` token of the AVeriTeC training
split (claims, questions, answers, Boolean explanations, justifications) and every
single-word WordNet lemma; the synonym keys are complete (see
:mod:`averitec_tools.metrics.lexicon`). The printed content digest is the signature's
``lex:``; rebuilding from the same inputs gives the same digest
(``tests/test_lexicon.py`` checks the shipped file's digest against its content).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "averitec_tools" / "data" / "lexicon"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="folder with averitec/train.json (the stem vocabulary)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)

    import nltk

    if nltk.__version__ != "3.9.1":
        print(f"build_lexicon.py: needs NLTK 3.9.1 first on PYTHONPATH, found {nltk.__version__}", file=sys.stderr)
        return 3
    from nltk.corpus import wordnet
    from nltk.stem.porter import PorterStemmer
    from tqdm import tqdm

    from averitec_tools.metrics.lexicon_build import stem_arrays, synonym_arrays, write_lexicon
    from averitec_tools.metrics.wordnet_synonyms import WordNetSynonyms

    sys.path.insert(0, str(ROOT / "tests"))
    from _score_corpus import train_strings

    start = time.perf_counter()
    strings = train_strings(args.data_dir)
    vocabulary = {t.lower() for s in tqdm(strings, desc="tokenising train", file=sys.stderr) for t in nltk.word_tokenize(s)}
    n_train = len(vocabulary)
    vocabulary |= {lemma for lemma in wordnet._lemma_pos_offset_map if "_" not in lemma}
    arrays = stem_arrays(vocabulary=vocabulary, stemmer=PorterStemmer())
    with tqdm(desc="synonym sets", unit="key", file=sys.stderr) as bar:
        arrays.update(synonym_arrays(wordnet=wordnet, progress=bar))
    files = WordNetSynonyms(nltk.data.find("corpora/wordnet"))
    meta = {
        "format": 1, "nltk": nltk.__version__, "wordnet_version": files.version, "wordnet_checksum": files.checksum,
        "stem_vocabulary": f"AVeriTeC train.json word_tokenize tokens ({n_train} lower-cased) + WordNet single-word lemmas",
        "n_stems": int(arrays["stem_cut"].size), "n_synonym_keys": int(arrays["syn_lengths"].size),
        "n_names": sum(int(a.size) for k, a in arrays.items() if k.startswith("names_")),
    }
    digest = write_lexicon(args.out, arrays, meta)
    size = sum(f.stat().st_size for f in args.out.iterdir())
    print(json.dumps({**meta, "digest": digest, "folder": str(args.out), "bytes": size,
                      "seconds": round(time.perf_counter() - start, 1)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
