"""The GPU check's kit for an offline device image: the wheels it lacks, in bundles of at most 60 MiB.

An image with Python 3.12, torch (CUDA), transformers, sentence-transformers, accelerate and peft
but no network lacks what ``make gpu-check`` also imports: TRL and ``datasets`` (with pyarrow and
pandas), bitsandbytes, faiss, bm25s, NLTK (with WordNet, for AVeriTeC's METEOR), pydantic and rich.

* ``python benchmarks/gpu_kit.py download [--out wheels/gpu]`` (a machine that reaches PyPI;
  ``make gpu-kit``): ``pip download`` of :data:`WHEELS` for CPython 3.12 on manylinux x86-64, no
  dependencies resolved (the image has the rest), WordNet zipped from the local NLTK data, packed
  first-fit-decreasing into ``bundle-N/`` folders of at most :data:`BUNDLE_BYTES` each, with
  ``manifest.json`` (every file's size and sha256, each bundle's total);
* ``python benchmarks/gpu_kit.py install --bundles DIR [--venv .venv-device]`` (the device, offline;
  ``make venv-device``): a venv over the image's own packages (``--system-site-packages``), every
  wheel of every bundle found under ``DIR`` installed with ``--no-index --no-deps``, WordNet unpacked
  into ``VENV/nltk_data``. Bundles can arrive in separate runs (one 64 MiB carry each): a rerun
  installs what is new.

Nothing here has run on the device image yet (no GPU was lent to this work): the sizes in
``docs/gpu.md`` are this script's ``download`` output, measured here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

#: The wheels the image lacks (pinned to what this project is tested with where it matters).
WHEELS: tuple[str, ...] = (
    "trl==1.16.0", "datasets==5.2.0", "pyarrow==26.0.1", "pandas", "dill", "multiprocess", "xxhash", "fsspec",
    "aiohttp", "aiosignal", "aiohappyeyeballs", "frozenlist", "multidict", "propcache", "yarl", "attrs",
    "bitsandbytes>=0.45", "faiss-cpu==1.15.1", "bm25s==0.3.16", "nltk", "regex", "click", "joblib",
    "pydantic", "pydantic-core", "annotated-types", "typing-inspection", "rich", "markdown-it-py", "mdurl",
    "pygments",
)
#: One carry to the device machine (64 MiB for every carried path together: 4 MiB left for the rest).
BUNDLE_BYTES = 60 * 2**20
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_24_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64", "any")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _wordnet(into: Path) -> Path | None:
    """``corpora/wordnet.zip`` from the first NLTK data folder that has WordNet (zipped if unpacked)."""
    for root in [p for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p]:
        corpora = Path(root) / "corpora"
        if (corpora / "wordnet.zip").is_file():
            return Path(shutil.copy(corpora / "wordnet.zip", into / "wordnet.zip"))
        if (corpora / "wordnet").is_dir():
            out = into / "wordnet.zip"
            with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
                for f in sorted((corpora / "wordnet").rglob("*")):
                    if f.is_file():
                        z.write(f, f.relative_to(corpora).as_posix())
            return out
    return None


def pack(files: list[Path], out: Path) -> list[dict[str, object]]:
    """Move ``files`` into ``out/bundle-N/`` folders of at most :data:`BUNDLE_BYTES` (first fit, largest first)."""
    bundles: list[list[Path]] = []
    sizes: list[int] = []
    for f in sorted(files, key=lambda p: -p.stat().st_size):
        if f.stat().st_size > BUNDLE_BYTES:
            raise SystemExit(f"gpu-kit: {f.name} ({f.stat().st_size} bytes) is larger than one bundle")
        slot = next((i for i, used in enumerate(sizes) if used + f.stat().st_size <= BUNDLE_BYTES), None)
        if slot is None:
            bundles.append([])
            sizes.append(0)
            slot = len(bundles) - 1
        bundles[slot].append(f)
        sizes[slot] += f.stat().st_size
    manifest = []
    for i, members in enumerate(bundles, start=1):
        folder = out / f"bundle-{i}"
        folder.mkdir(parents=True, exist_ok=True)
        entries = [{"file": f.name, "bytes": f.stat().st_size, "sha256": _sha256(f)} for f in members]
        for f in members:
            shutil.move(str(f), folder / f.name)
        manifest.append({"bundle": folder.name, "bytes": sizes[i - 1], "mib": round(sizes[i - 1] / 2**20, 1),
                         "files": entries})
    return manifest


def download(out: Path) -> int:
    staging = out / "staging"
    staging.mkdir(parents=True, exist_ok=True)
    platforms = [a for p in PLATFORMS for a in ("--platform", p)]
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version",
                    "3.12", "--implementation", "cp", "--abi", "cp312", *platforms, "-d", str(staging), *WHEELS],
                   check=True)
    files = sorted(staging.glob("*.whl"))
    wordnet = _wordnet(staging)
    manifest = pack(files + ([wordnet] if wordnet else []), out)
    shutil.rmtree(staging)
    (out / "manifest.json").write_text(json.dumps({"bundles": manifest, "wheels": list(WHEELS),
                                                   "wordnet": wordnet is not None}, indent=1) + "\n")
    for b in manifest:
        print(f"{b['bundle']}: {b['mib']} MiB, {len(b['files'])} files")  # type: ignore[arg-type]
    return 0


def install(bundles: Path, target: Path) -> int:
    if not (target / "bin" / "python").exists():
        venv.EnvBuilder(system_site_packages=True, with_pip=True).create(target)
    wheels = sorted(bundles.glob("bundle-*/*.whl"))
    if wheels:
        subprocess.run([str(target / "bin" / "python"), "-m", "pip", "install", "--no-index", "--no-deps", "-q",
                        *map(str, wheels)], check=True)
    for zipped in bundles.glob("bundle-*/wordnet.zip"):
        corpora = target / "nltk_data" / "corpora"
        corpora.mkdir(parents=True, exist_ok=True)
        shutil.copy(zipped, corpora / "wordnet.zip")
    print(f"gpu-kit: {len(wheels)} wheels installed into {target} (system site packages underneath)")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("download", help="fetch and bundle the wheels (needs PyPI)")
    d.add_argument("--out", default="wheels/gpu", type=Path)
    i = sub.add_parser("install", help="install every bundle found (offline)")
    i.add_argument("--bundles", default="wheels/gpu", type=Path)
    i.add_argument("--venv", default=".venv-device", type=Path)
    args = parser.parse_args()
    return download(args.out) if args.command == "download" else install(args.bundles, args.venv)


if __name__ == "__main__":
    sys.exit(main())
