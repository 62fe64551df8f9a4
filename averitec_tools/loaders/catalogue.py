"""The official data files, one verified download away: names, sources, checksums.

Every entry says where the files live (hub repository *and its type*: the organisers keep
AVeriTeC in a **model** repository, ``chenxwh/AVeriTeC``, which their ``download_data.sh``
fetches with ``wget``), the licence, sizes, and for each file whether the package records
its sha256 and where that checksum comes from. ``docs/data.md`` lists the same table for
readers. Checksums were computed from the public files wherever they could be reached:

* AVeriTeC ``train.json`` / ``dev.json``: sha256 of files whose git blob ids (``0f190e11…``,
  ``40974243…``) are those of ``data/train.json`` / ``data/dev.json`` in ``chenxwh/AVeriTeC``
  at commit ``8a4d25e`` (the hub repository's history up to 2024-04-12 is mirrored on GitHub
  in ``skmalviya/AVeriTeC_SKDU``) and of the AVeriTeC GitHub repository's ``data/``;
* the train and dev knowledge stores: the Git LFS ``oid sha256`` and ``size`` of their pointer
  files at that commit;
* FEVER 1.0's files: the sha256 and sizes ``huggingface/datasets`` recorded for the official
  ``fever.ai`` downloads (``datasets/fever/dataset_infos.json``, ``download_checksums``).

The AVeriTeC 2024 test claims and test store, the FEVER-8 2025 test data and VitaminC have
no checksum recorded here (they were not reachable): they download as *unverified*, their
sha256 is recorded in the manifest on first download (later downloads must match it), and
each file is still checked against the hub's own content hash (Git LFS sha256 / git blob id).
FEVER's claims and wiki-pages are tried in order at (1) the organisers' own download folder,
``https://fever.ai/download/fever/`` (:data:`FEVER_URL`, the original files: a public
provenance record of 2026-07-23 fetched ``wiki-pages.zip`` there with exactly the recorded
sha256 and size, while the older ``s3-eu-west-1.amazonaws.com/fever.public`` URLs answer 403),
then (2) the hub's ``fever`` dataset (:data:`FEVER_HUB`, ``fever/fever`` at the pinned commit, which
holds parquet files under ``v1.0/`` rather than the original names: a mirror in the original layout
is named with ``--repo``; ``--revision`` without ``--repo`` applies to this hub location);
every file is held to the recorded sha256 wherever it comes from, and ``--from DIR`` installs
copies a user has. Where neither location serves a file, the download stops with one line
naming each location's answer, ``--repo`` and ``--from``.

Example:
    >>> from averitec_tools.downloads import get_sources
    >>> dev = get_sources("averitec", "dev")[0]
    >>> dev.hub.describe(), dev.files[0].path, dev.verified
    ('chenxwh/AVeriTeC (model, 8a4d25e17a70bbeda5fe2abda53c80e2c8bc99af)', 'data/dev.json', True)
    >>> source_for("averitec", "test_2025").key, source_for("vitaminc", "dev").key
    ('fever8/test', 'vitaminc')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from averitec_tools.downloads.sources import (
    SOURCES,
    DataSource,
    FolderListing,
    HubLocation,
    RemoteFile,
    Unpack,
    register_source,
)
from averitec_tools.loaders.store_layouts import AVERIMATEC_SPLITS, FLAT_LAYOUT, StoreLayout

#: Pinned commits, with where each was found (``None``: no commit verified from here; downloading
#: that source then needs ``--revision``, see :func:`~averitec_tools.downloads.sources.require_revision`).
#: ``chenxwh/AVeriTeC`` at 8a4d25e (12 April 2024): the hub repository's last commit before README-only
#: edits in its public GitHub mirror ``skmalviya/AVeriTeC_SKDU`` (whose history merges
#: huggingface.co/chenxwh/AVeriTeC); train/dev claims and stores, whose checksums are recorded at it.
AVERITEC_2024_COMMIT = "8a4d25e17a70bbeda5fe2abda53c80e2c8bc99af"
#: (Public code also fetches the dev store at the short revision ``26238ae``: in the mirror
#: 26238ae364afa0b7b371e44740d72b1dd0b46694, an ancestor of 8a4d25e with the same LFS pointer; the
#: claims files were added after it.)
#: ``chenxwh/AVeriTeC`` holding the later files (2024 test claims and updated store, FEVER-8's 2025 files):
#: no commit found in public material.
AVERITEC_LATER_COMMIT: str | None = None
#: ``tals/vitaminc``: found in a public study protocol that pins the authors' test.jsonl at this revision with
#: its sha256 (:data:`VITAMINC_TEST_SHA256`); not verified from here (no hub access).
VITAMINC_COMMIT = "be6febb761b0b2807687e61e0b5282e459df2fa0"
VITAMINC_TEST_SHA256 = "7ad1808dbc30c62e0a1427a53022d0dfaff668a1fde3c4b612a2d266edd753ad"
#: ``fever/fever``: found in public code that downloads ``v1.0/fever-labelled_dev.parquet`` at this commit; at it
#: the repository holds parquet files under ``v1.0/`` (one row per evidence sentence), not the original
#: ``*.jsonl`` files the FEVER sources name, so their download stops with one line naming ``--repo`` and ``--from``.
FEVER_COMMIT = "55e20b98b435ba817a6c9b4e05871932bd164645"

AVERITEC_HUB = HubLocation("chenxwh/AVeriTeC", repo_type="model", revision=AVERITEC_2024_COMMIT)
#: The same repository for the files added after 8a4d25e.
AVERITEC_LATER_HUB = HubLocation("chenxwh/AVeriTeC", repo_type="model", revision=AVERITEC_LATER_COMMIT)
VITAMINC_HUB = HubLocation("tals/vitaminc", repo_type="dataset", revision=VITAMINC_COMMIT)
#: The hub's ``fever`` dataset: FEVER 1.0's claims files and ``wiki-pages.zip`` at its root (original names).
FEVER_HUB = HubLocation("fever/fever", repo_type="dataset", revision=FEVER_COMMIT)
#: The organisers' download folder (the original files), tried first.
FEVER_URL = HubLocation("https://fever.ai/download/fever", repo_type="url")
_AV_COMMIT = f"chenxwh/AVeriTeC at commit {AVERITEC_2024_COMMIT}"
_LFS = f"Git LFS pointer (oid sha256, size) in {_AV_COMMIT}, mirrored in github:skmalviya/AVeriTeC_SKDU"
_FEVER_RECORD = ("sha256 and size huggingface/datasets recorded for the official fever.ai file "
                 "(github:huggingface/datasets datasets/fever/dataset_infos.json, commit 040102f)")
_AV_LICENSE = "cc-by-nc-4.0"
_AV_HOME = "https://fever.ai/dataset/averitec.html"
_STORE_MEMBERS = "[0-9]*.json"  # one JSON-lines file per claim, named <claim_id>.json


def _count(family: str, what: str) -> Callable[[Path], str]:
    def check(path: Path) -> str:
        from averitec_tools.loaders.base import FAMILIES

        n = sum(1 for _ in FAMILIES.get(family).read_file(path))
        return f"{n} {what}"

    return check


_AV_CLAIMS = _count("averitec", "claims")
_FEVER_CLAIMS = _count("fever", "claims")

for split, spec in (
    ("train", RemoteFile("data/train.json", sha256="ae5eda7c42ddf1695ef185a7ba1bc716928f5adf57103e4f78aae5f9afe00f9c",
                         size=10184813, checksum_source=f"computed from the file with git blob 0f190e11 ({_AV_COMMIT}; "
                         "identical to github:MichSchli/AVeriTeC data/train.json)")),
    ("dev", RemoteFile("data/dev.json", sha256="499793726b4a5406780928a3d9dedc48d6dd53de778f22437d129cacdb08e300",
                       size=1785475, checksum_source=f"computed from the file with git blob 40974243 ({_AV_COMMIT}; "
                       "identical to github:MichSchli/AVeriTeC data/dev.json)")),
    ("test", RemoteFile("data/test.json")),
):
    register_source(DataSource(
        name="averitec", split=split, title=f"AVeriTeC {split} claims" + (" (2024 shared task, no labels)"
                                                                        if split == "test" else ""),
        license=_AV_LICENSE, hub=AVERITEC_HUB if spec.verified else AVERITEC_LATER_HUB, dest="averitec",
        files=(spec,), homepage=_AV_HOME, check=_AV_CLAIMS,
        notes=() if spec.verified else ("2,215 claims released 18 July 2024 (ids 0-999 from the AVeriTeC "
                                        "sources, 1000-2214 new); no checksum recorded in the package",),
    ))

_TRAIN_STORE = (
    RemoteFile("data_store/knowledge_store/train/train_0_999.zip", checksum_source=_LFS, size=20730339734,
               sha256="389d2284c5f25410205ec530c2101c3e6d575eae460731e1909ad19192dcb810"),
    RemoteFile("data_store/knowledge_store/train/train_1000_1999.zip", checksum_source=_LFS, size=21273604733,
               sha256="e2bf5c1dccc855cf3474ccd3f14678fe60f21e6c69685a34d7bc884996fec446"),
    RemoteFile("data_store/knowledge_store/train/train_2000_3067.zip", checksum_source=_LFS, size=21520772573,
               sha256="d3e27cc4072cd085dbac44272f1ea918dd3ff970b39d94f143e40c51bbde43d0"),
)
_DEV_STORE = (RemoteFile("data_store/knowledge_store/dev_knowledge_store.zip", checksum_source=_LFS,
                         size=11537899362,
                         sha256="021e258cd6fb5fe6d627a4667d663e95c184c966939c15124df9206142fc2212"),)
_STORE_NOTE = ("2024 layout: one <claim_id>.json per claim, JSON lines {claim_id, type, query, url, url2text}; "
               "unpacked flat into knowledge_store/<split>/ (the archives nest members differently)")
for split, files, listing, extra in (
    ("train", _TRAIN_STORE, None, ()),
    ("dev", _DEV_STORE, None, ()),
    ("test", (), FolderListing("data_store/knowledge_store/test_updated", ("*.zip",)),
     ("the store updated on 15 Nov 2024 (test_updated/, which fixed a leak in the July test/ store); archive "
      "names are listed from the hub when the download runs; no checksum recorded in the package",)),
):
    register_source(DataSource(
        name="averitec-store", split=split, title=f"AVeriTeC {split} knowledge store (2024 shared task)",
        license=_AV_LICENSE, hub=AVERITEC_HUB if files else AVERITEC_LATER_HUB, dest="averitec", files=files,
        listing=listing,
        unpack=Unpack(into=f"knowledge_store/{split}", members=_STORE_MEMBERS, layout=FLAT_LAYOUT), homepage=_AV_HOME,
        notes=(_STORE_NOTE, *extra),
    ))

register_source(DataSource(
    name="fever8", split="test", title="FEVER-8 (2025) AVeriTeC test claims", license=_AV_LICENSE,
    hub=AVERITEC_LATER_HUB,
    dest="averitec", files=(RemoteFile("data/test_2025.json"),), homepage="https://fever.ai/task.html",
    check=_AV_CLAIMS, notes=("the file the organisers' download_data.sh fetches (Raldir/FEVER-8-Shared-Task); "
                             "loads as averitec/test_2025; no checksum recorded in the package",),
))
register_source(DataSource(
    name="fever8-store", split="test", title="FEVER-8 (2025) test knowledge store", license=_AV_LICENSE,
    hub=AVERITEC_LATER_HUB, dest="averitec",
    listing=FolderListing("data_store/knowledge_store/test_2025", ("*.zip",)),
    unpack=Unpack(into="knowledge_store/test_2025", members=_STORE_MEMBERS, layout=FLAT_LAYOUT),
    homepage="https://fever.ai/task.html",
    notes=(_STORE_NOTE, "archive names are listed from the hub when the download runs, as the organisers' "
           "download_data.sh does; no checksum recorded in the package"),
))

_FEVER_FILES: Mapping[str, RemoteFile] = {
    "train": RemoteFile("train.jsonl", size=33024303, checksum_source=_FEVER_RECORD,
                        sha256="eba7e8f87076753f8494718b9a857827af7bf73e76c9e4b75420207d26e588b6"),
    "shared_task_dev": RemoteFile("shared_task_dev.jsonl", size=4349935, checksum_source=_FEVER_RECORD,
                                  sha256="e89865bfe1b4dd054e03dd57d7241a6fde24862905f31117cf0cd719f7c78df7"),
    "shared_task_test": RemoteFile("shared_task_test.jsonl", size=1599159, checksum_source=_FEVER_RECORD,
                                   sha256="76dd0872d8fa1f49efe1194fe8a88b7dd4c715c77d87a142b615d4be583e1e51"),
    "paper_dev": RemoteFile("paper_dev.jsonl", size=2168767, checksum_source=_FEVER_RECORD,
                            sha256="41158707810008747946bf23471e82df53e77a513524b9e3ec1c2e674ef5ef8c"),
    "paper_test": RemoteFile("paper_test.jsonl", size=2181168, checksum_source=_FEVER_RECORD,
                             sha256="fb7b0280a0adc2302bbb29bfb7af37274fa585de3171bcf908f180642d11d88e"),
}
_FEVER_NOTE = ("tried at fever.ai/download/fever (the organisers' files), then the hub's fever/fever, each held to "
               "the checksums recorded for the fever.ai files; at the pinned commit the hub repository holds parquet "
               "files under v1.0/ (flattened rows) instead of the original names, so where fever.ai does not serve "
               "them, name a mirror with --repo OWNER/NAME (same layout) or install your copies with --from DIR")
for split, spec in _FEVER_FILES.items():
    register_source(DataSource(
        name="fever", split=split, title=f"FEVER 1.0 {split} claims", license="cc-by-sa-3.0", hub=FEVER_URL,
        mirrors=(FEVER_HUB,), dest="fever", files=(spec,), homepage="https://fever.ai/dataset/fever.html",
        check=_FEVER_CLAIMS, notes=(_FEVER_NOTE,),
    ))
register_source(DataSource(
    name="fever-wiki-pages", split=None, title="FEVER 1.0 wiki-pages (June 2017 Wikipedia, 5.4M pages)",
    license="cc-by-sa-3.0", hub=FEVER_URL, mirrors=(FEVER_HUB,), dest="fever",
    files=(RemoteFile("wiki-pages.zip", size=1713485474, checksum_source=_FEVER_RECORD,
                      sha256="4b06d95da6adf7fe02d2796176c670dacccb21348da89cba4c50676ab99665f2"),),
    unpack=Unpack(into="wiki-pages", members="*.jsonl"), homepage="https://fever.ai/dataset/fever.html",
    notes=(_FEVER_NOTE, "unpacked into fever/wiki-pages/, the wiki_dir= the FEVER loader takes"),
))
register_source(DataSource(
    name="vitaminc", split=None, title="VitaminC fact verification (train / validation / test)",
    license="cc-by-sa-3.0", hub=VITAMINC_HUB, dest="vitaminc",
    files=(RemoteFile("test.jsonl", sha256=VITAMINC_TEST_SHA256,
                      checksum_source=f"the sha256 a public study protocol pins for tals/vitaminc test.jsonl at "
                      f"{VITAMINC_COMMIT[:12]}; not verified from the development machines"),),
    listing=FolderListing("", ("README.md", "*.jsonl", "*.json", "*.parquet", "*.csv"), keep_paths=True),
    homepage="https://github.com/TalSchuster/VitaminC",
    notes=("the hub dataset's data files and card, kept in its layout (train.jsonl, dev.jsonl, test.jsonl at "
           "vitaminc/, where the R2VC recipes read them) and read with datasets.load_dataset (no loading script: "
           "every datasets version reads it); test.jsonl held to a recorded sha256, the other files unverified",),
))

#: The Ev2R study's human ratings of AVeriTeC 2024 submissions and its per-item scores and published
#: correlations (``averitec meta-eval``): (repository path, destination, sha256, size), the sha256 and
#: sizes computed from the files at the pinned commit (checked equal to the shared snapshot's).
_META_EVAL_COMMIT = "fc47014a21977c92c5f691a93068b9ccc95b00ed"
META_EVAL_HUB = HubLocation("mubasharaak/fc-evidence-evaluation", repo_type="github", revision=_META_EVAL_COMMIT)
_META_EVAL_FILES: tuple[tuple[str, str, str, int], ...] = (
    ("LICENSE", "LICENSE", "b2ece9556dbe2ac7f716bf177f0a35840f873c684652dc6b489bc10c676acbc8", 1073),
    ("data/averitec_shared_task/0_submissions_averitec.xlsx", "data/0_submissions_averitec.xlsx", "3e1f83b5eb587ca3b922c966a6c4d21deaa3a07e3729f37ee814a3512e99eb5f", 79491),
    ("data/averitec_shared_task/AVERITEC_FC_Evidence_Evaluation_Responses.xlsx", "data/AVERITEC_FC_Evidence_Evaluation_Responses.xlsx", "026c67ab16b74ed64a0a4360cfde4cb6c86a7a137f9880a2cb17aea1ef14eec4", 621459),
    ("data/averitec_shared_task/gold_eval_selection.json", "data/gold_eval_selection.json", "949649f610f6b8941d44af09569773933cec5cb643b92b3575b2181a56d3faa7", 122022),
    ("results/averitec_shared_task/correlation_atomic_gemini-1.5-flash.csv", "results/correlation_atomic_gemini-1.5-flash.csv", "d3999dde56f30ae5348781b3dbebf61603fa2797f74df4e20809595d8d56be22", 416),
    ("results/averitec_shared_task/correlation_atomic_gemini-1.5-pro.csv", "results/correlation_atomic_gemini-1.5-pro.csv", "6fe6049db833629cb9948a684e608e265bd5896f408c3da5b45c22ccd5136bbb", 414),
    ("results/averitec_shared_task/correlation_atomic_gpt-4o-2024-08-06.csv", "results/correlation_atomic_gpt-4o-2024-08-06.csv", "ca427fea82671fd420f9be3fe38b30328a65323938c7e1894af5b6a3fcadbb3e", 420),
    ("results/averitec_shared_task/correlation_atomic_llama3.1:70b.csv", "results/correlation_atomic_llama3.1-70b.csv", "a948a4536c6b3704ab146b226df8c0fb66d7b7094bb7ec7c7366401f4e4753db", 417),
    ("results/averitec_shared_task/correlation_atomic_reference_prec_recall_gemini-1.5-flash.csv", "results/correlation_atomic_reference_prec_recall_gemini-1.5-flash.csv", "fdb25b2164187b1ecc9c6849d8128f7700e7229c21845bbdd6764c281b3375af", 1139),
    ("results/averitec_shared_task/correlation_atomic_reference_prec_recall_gemini-1.5-pro.csv", "results/correlation_atomic_reference_prec_recall_gemini-1.5-pro.csv", "1abbdd70d772f0d1c927a992634a2d6c228d7134a17d10ce868500df5e602132", 1117),
    ("results/averitec_shared_task/correlation_atomic_reference_prec_recall_gpt-4o-2024-05-13.csv", "results/correlation_atomic_reference_prec_recall_gpt-4o-2024-05-13.csv", "592e065c31a8eca47139f73b8a5aa1691fa101ae1c0a649f264130614911e4e5", 1137),
    ("results/averitec_shared_task/correlation_atomic_reference_prec_recall_llama3.1:70b.csv", "results/correlation_atomic_reference_prec_recall_llama3.1-70b.csv", "578c4c73c9b81868ef969828abfe99406f7a4cc2611ee71b3a24908f2e4ac57c", 1159),
    ("results/averitec_shared_task/correlation_bleu.csv", "results/correlation_bleu.csv", "c1386dd8c5aef23379f858dc970e6a98b115eb5d45397137131ee2951e1892a8", 407),
    ("results/averitec_shared_task/correlation_cot_gpt-4o-2024-08-06.csv", "results/correlation_cot_gpt-4o-2024-08-06.csv", "cc03344fff0117d9aaf559764f5e4c85e40867cc5c5626cdccc7de196809d178", 401),
    ("results/averitec_shared_task/correlation_hmeteor.csv", "results/correlation_hmeteor.csv", "f104b04ba7d13df2a71039a9736cca248f5995d952f95767951813f93fedfbf1", 437),
    ("results/averitec_shared_task/correlation_hmeteor_only_questions.csv", "results/correlation_hmeteor_only_questions.csv", "d81a63758f2c3f78dab090dc4032987dda064e3498cedb95853c89cc7f4e0ee3", 426),
    ("results/averitec_shared_task/correlation_meteor.csv", "results/correlation_meteor.csv", "e3dd3322247c36a313c9b72cedc21e553e874749f119beb27ace7d1b762e9dae", 416),
    ("results/averitec_shared_task/correlation_pseudo_trained.csv", "results/correlation_pseudo_trained.csv", "d6fc84df010c1c00f0d756e83ec6ee46eeafb45c9fb5975bfb7594e66d0d4692", 465),
    ("results/averitec_shared_task/correlation_ref_trained.csv", "results/correlation_ref_trained.csv", "578f6716dffb9badbfa87373d52a2e9f96feeb95f91c52158f5f315045542d28", 448),
    ("results/averitec_shared_task/correlation_rouge.csv", "results/correlation_rouge.csv", "21a1072a58a343d35feee7c1e86d1028ce5ad8ae7f1066b08bb0590a37cd1c73", 405),
    ("results/averitec_shared_task/predictions_bleu.jsonl", "results/predictions_bleu.jsonl", "98ef8a54e3ce257e493dc4e272d08df6c9411da9265d687fe1dfa3a203873290", 791606),
    ("results/averitec_shared_task/predictions_hmeteor.jsonl", "results/predictions_hmeteor.jsonl", "168ca4dcfae4c19e91edebc8669b61f5bbfd78325631883361b3687b46ba83fd", 794145),
    ("results/averitec_shared_task/predictions_meteor.jsonl", "results/predictions_meteor.jsonl", "2d889b033ce255a08fbf2419157118755ab62b81519dd2fccd0d7cbd8983c267", 793409),
    ("results/averitec_shared_task/predictions_rouge.jsonl", "results/predictions_rouge.jsonl", "b3fe74b6a4a87f9d7812601c829c5b0844ab00d3ec4798ac3e8f6daf229e636b", 793311),
)
register_source(DataSource(
    name="meta-eval", split=None, title="Ev2R study: human ratings of AVeriTeC 2024 evidence, per-item scores",
    license="mit (code) / cc-by-nc-4.0 (AVeriTeC-derived data)", hub=META_EVAL_HUB,
    dest="meta_eval/fc-evidence-evaluation",
    files=tuple(RemoteFile(path, sha256=sha, size=size, dest=dest,
                           checksum_source=f"github:{META_EVAL_HUB.repo_id} at {_META_EVAL_COMMIT[:8]}")
                for path, dest, sha, size in _META_EVAL_FILES),
    homepage="https://github.com/mubasharaak/fc-evidence-evaluation",
    notes=("read by `averitec meta-eval` (docs/meta_eval.md); ':' in two result file names becomes '-'",),
))

#: ``Rui4416/AVerImaTeC`` (dataset): no commit found in public material (files listed at main: README.md,
#: train.json, val.json, images.zip, test_data.zip), so a download names one with --revision.
AVERIMATEC_COMMIT: str | None = None
AVERIMATEC_HUB = HubLocation("Rui4416/AVerImaTeC", repo_type="dataset", revision=AVERIMATEC_COMMIT)
_IM_HOME = "https://huggingface.co/datasets/Rui4416/AVerImaTeC"
_IM_NOTE = "no checksum recorded in the package; no commit pinned (none found in public material): pass --revision"
for split, file, unpack in (
    ("train", "train.json", None), ("val", "val.json", None),
    ("test", "test_data.zip", Unpack(into="test_data")),  # -> test_data/test.json
    ("images", "images.zip", Unpack(into="images")),  # every image a claim names, flat by file name
):
    register_source(DataSource(
        name="averimatec", split=split, title=f"AVerImaTeC (FEVER-9) {split}" + (" claims" if split != "images" else ""),
        license="unknown", hub=AVERIMATEC_HUB, dest="averimatec", files=(RemoteFile(file),), unpack=unpack,
        homepage=_IM_HOME, check=_count("averimatec", "claims"), notes=(_IM_NOTE,),
    ))
for split in AVERIMATEC_SPLITS:
    register_source(DataSource(
        name="averimatec-store", split=split, title=f"AVerImaTeC {split} knowledge store (text and images)",
        license="unknown", hub=None, dest="averimatec", listing=FolderListing("", ("*.zip",)),
        unpack=Unpack(into=f"Knowledge_Store/{split}", layout=StoreLayout(split)),
        homepage="https://github.com/abril4416/AVerImaTec_Shared_Task",
        notes=("distributed by the organisers outside the hub (a shared drive folder): install the archive or "
               "the unpacked folder with --from DIR; the val/test archives unpack to converted_datastore/, "
               f"installed as averimatec/Knowledge_Store/{split}/ (the rename the organisers ask for)",),
    ))

#: (family, split) → the source whose files that split is read from.
_SPLIT_SOURCES: Mapping[tuple[str, str], str] = {
    **{("averitec", s): f"averitec/{s}" for s in ("train", "dev", "test")},
    ("averitec", "test_2025"): "fever8/test",
    **{("fever", s): f"fever/{s}" for s in _FEVER_FILES},
    **{("vitaminc", s): "vitaminc" for s in ("train", "dev", "test")},
    **{("averimatec", s): f"averimatec/{s}" for s in ("train", "val", "test")},
}
#: (family, split) → sources a split also needs (AVerImaTeC's claims name images in images.zip).
_COMPANIONS: Mapping[tuple[str, str], tuple[str, ...]] = {
    ("averimatec", s): ("averimatec/images",) for s in ("train", "val", "test")}


def fever_sources() -> str:
    """Where FEVER's files are tried, in order (for doctor and the docs).

    Example:
        >>> fever_sources()
        'https://fever.ai/download/fever, then fever/fever (dataset, 55e20b98b435ba817a6c9b4e05871932bd164645); each file checked by its recorded sha256'
    """
    return ", then ".join(h.describe() for h in (FEVER_URL, FEVER_HUB)) + "; each file checked by its recorded sha256"


def source_for(family: str, split: str) -> DataSource | None:
    """The registered source a loader split is downloaded from (``None``: none)."""
    key = _SPLIT_SOURCES.get((family, split))
    return SOURCES.get(key) if key else None


def companions_of(family: str, split: str) -> list[DataSource]:
    """Sources a loader split needs besides :func:`source_for` (AVerImaTeC: the images)."""
    return [SOURCES.get(k) for k in _COMPANIONS.get((family, split), ())]


__all__ = ["AVERITEC_HUB", "META_EVAL_HUB", "companions_of", "source_for"]
