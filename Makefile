# Two entry points: `make demo` and `make test`. Both create/refresh .venv in the repo root.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
SHARED ?= $(abspath ../shared)
# The paper targets read data where `averitec data download` puts it (and $AVERITEC_DATA_DIR only when the
# caller sets it): the ../shared default below is this repository's own CI data, for the tests.
USER_DATA_DIR := $(AVERITEC_DATA_DIR)
USER_NLTK_DATA := $(NLTK_DATA)
export AVERITEC_DATA_DIR ?= $(SHARED)/data
export NLTK_DATA ?= $(SHARED)/nltk_data
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

# The reference scorer (live reference tests, benchmark) runs under a real NLTK 3.9.1, kept apart from .venv.
NLTK_REF := $(VENV)/nltk391

.PHONY: venv venv-core venv-all venv-gpu venv-leaderboard gpu-check gpu-kit venv-device gpu-check-device demo test lint bench lexicon bench-long bench-ev2r bench-averimatec bench-r2vc bench-leaderboard r2vc-dev r2vc-table r2vc-paper r2vc-paper-ci averitec-dev averitec-paper leaderboard-demo clean

# The CPU torch wheel must be pinned: a looser spec pulls a multi-GB CUDA build.
TORCH_SPEC ?= torch==2.13.0

$(VENV)/.core-stamp: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e ".[data,dev]"
	touch $@

$(VENV)/.all-stamp: $(VENV)/.core-stamp pyproject.toml
	$(PIP) install -q "$(TORCH_SPEC)"
	$(PIP) install -q -e ".[all,dev]" "$(TORCH_SPEC)"
	touch $@

$(VENV)/.leaderboard-stamp: $(VENV)/.core-stamp pyproject.toml
	$(PIP) install -q -e ".[leaderboard]"
	touch $@

# The GPU set in its own venv (faiss-gpu and faiss-cpu install the same module: never one venv
# for both): a CUDA torch from PyTorch's index, then `[gpu-all,dev]` (faiss-gpu, bitsandbytes,
# the models). Multi-GB; never run on the CPU CI machines. FlashAttention-2 is the optional
# second step (it builds against the installed torch):
#   $(GPU_VENV)/bin/pip install flash-attn --no-build-isolation
GPU_VENV ?= .venv-gpu
GPU_PY := $(GPU_VENV)/bin/python
GPU_TORCH_SPEC ?= torch==2.13.0
GPU_TORCH_INDEX ?= https://download.pytorch.org/whl/cu128
$(GPU_VENV)/.gpu-stamp: pyproject.toml
	$(PYTHON) -m venv $(GPU_VENV)
	$(GPU_PY) -m pip install -q --upgrade pip
	$(GPU_PY) -m pip install -q "$(GPU_TORCH_SPEC)" --index-url $(GPU_TORCH_INDEX)
	$(GPU_PY) -m pip install -q -e ".[gpu-all,dev]" "$(GPU_TORCH_SPEC)" --extra-index-url $(GPU_TORCH_INDEX)
	$(GPU_VENV)/bin/averitec doctor --no-hub
	touch $@
venv-gpu: $(GPU_VENV)/.gpu-stamp

# What a GPU machine runs first (<= 8 minutes, no internet): the tiny models through every CUDA
# path the paper commands use, the paper commands themselves included, one line per check; exits 2
# on a machine without CUDA (docs/gpu.md).
gpu-check: $(GPU_VENV)/.gpu-stamp
	$(GPU_PY) benchmarks/gpu_check.py

# An offline GPU image with torch/transformers/sentence-transformers/accelerate/peft but nothing else:
# `make gpu-kit` (where PyPI answers) writes the missing wheels in bundles of <= 60 MiB under
# GPU_WHEELS; on the image, `make venv-device` installs every bundle found there (rerun it as further
# bundles arrive) into .venv-device over the image's own packages, and `make gpu-check-device` runs
# the check in it (docs/gpu.md: which wheels, their sizes).
GPU_WHEELS ?= wheels/gpu
DEVICE_VENV ?= .venv-device
gpu-kit: $(VENV)/.core-stamp
	$(PY) benchmarks/gpu_kit.py download --out $(GPU_WHEELS)
venv-device:
	$(PYTHON) benchmarks/gpu_kit.py install --bundles $(GPU_WHEELS) --venv $(DEVICE_VENV)
gpu-check-device:
	PYTHONPATH=$(CURDIR) NLTK_DATA=$(abspath $(DEVICE_VENV))/nltk_data $(DEVICE_VENV)/bin/python benchmarks/gpu_check.py

# The optional C accelerators (averitec_tools/metrics/_meteor_c.c: METEOR alignment; _text_c.c, _chunks_c.c,
# _lookup_c.c: tokenising and interning) are built in place by
# the editable install; rebuilt when its source changes (no C compiler: pure Python, same scores).
$(VENV)/.accel-stamp: $(VENV)/.core-stamp setup.py averitec_tools/metrics/_meteor_c.c averitec_tools/metrics/_text_c.c \
		averitec_tools/metrics/_chunks_c.c averitec_tools/metrics/_lookup_c.c averitec_tools/metrics/_text_c.h
	$(PIP) install -q --no-deps -e .
	touch $@

venv-core: $(VENV)/.core-stamp
venv-all: $(VENV)/.all-stamp
venv-leaderboard: $(VENV)/.leaderboard-stamp
venv: venv-all

demo: $(VENV)/.core-stamp $(VENV)/.accel-stamp
	$(VENV)/bin/averitec score examples/demo_predictions.json examples/demo_gold.json --profile averitec2024

# pytest-xdist workers (one test file, or one group of files sharing a session fixture, per
# worker at a time: tests/conftest.py); TEST_WORKERS=0 runs the suite in one process.
TEST_WORKERS ?= 2
test: $(VENV)/.all-stamp $(VENV)/.accel-stamp $(NLTK_REF)
	bash .ci/with_services.sh $(PY) -m pytest -q --durations=25 $(if $(filter-out 0,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadfile)

lint: $(VENV)/.core-stamp
	$(VENV)/bin/ruff check averitec_tools tests benchmarks
	$(VENV)/bin/mypy

$(NLTK_REF):
	$(PIP) install -q --target $(NLTK_REF) --no-deps nltk==3.9.1

# averitec score (cold and warm gold cache) vs the reference, the plain per-pair implementation
# and, with BENCH_BASELINE=DIR (another checkout, e.g. today's main), that version's averitec
# score; then in-process warm scoring of new submissions, phase by phase, beside the floor.
bench: $(VENV)/.core-stamp $(VENV)/.accel-stamp $(NLTK_REF)
	$(PY) benchmarks/bench_scorer.py --nltk-path $(NLTK_REF) $(if $(BENCH_BASELINE),--baseline-repo $(BENCH_BASELINE))
	$(PY) benchmarks/bench_warm.py

# Rebuild the exact lexical tables (averitec_tools/data/lexicon) with NLTK 3.9.1 itself.
lexicon: $(VENV)/.core-stamp $(NLTK_REF)
	PYTHONPATH=$(NLTK_REF):. $(VENV)/bin/python benchmarks/build_lexicon.py --data-dir $(AVERITEC_DATA_DIR)

# One claim with one very long answer (a word repeated 10k-100k times, 100k words of text, ...).
bench-long: $(VENV)/.core-stamp $(NLTK_REF)
	$(PY) benchmarks/bench_long_strings.py --nltk-path $(NLTK_REF)

# fever8 judge throughput: dev through a local judge answering after 0.5 s, cold and warm (~15 min).
bench-ev2r: $(VENV)/.core-stamp
	$(PY) benchmarks/bench_ev2r_judge.py --concurrency 1,4,8,16,32,64

# averimatec judge throughput: 152 synthetic val claims through a local judge answering after 0.5 s,
# against the organisers' one-at-a-time loop on the same server (~10 min, mostly waiting).
bench-averimatec: $(VENV)/.core-stamp
	$(PY) benchmarks/bench_averimatec_judge.py

bench-r2vc: $(VENV)/.all-stamp
	$(PY) benchmarks/bench_r2vc.py --n 20

# A local leaderboard on the bundled dev sample, pre-filled with the baseline; prints its URL.
LB_DEMO_DB ?= results/leaderboard-demo/leaderboard.db
LB_PORT ?= 8000
LB := $(VENV)/bin/averitec leaderboard
leaderboard-demo: $(VENV)/.leaderboard-stamp
	rm -f $(LB_DEMO_DB) $(LB_DEMO_DB)-wal $(LB_DEMO_DB)-shm && mkdir -p $(dir $(LB_DEMO_DB))
	$(LB) init examples/leaderboard/demo.yaml --db sqlite:///$(LB_DEMO_DB)
	$(LB) team add baseline --db sqlite:///$(LB_DEMO_DB)
	$(LB) submit examples/demo_predictions.json --db sqlite:///$(LB_DEMO_DB) --team baseline \
	  --system "AVeriTeC 2024 baseline (BLOOM-7b1 QA + BERT)" --phase demo --meta model=bloom-7b1 --meta open_weights=yes
	$(LB) serve --db sqlite:///$(LB_DEMO_DB) --port $(LB_PORT)

bench-leaderboard: $(VENV)/.leaderboard-stamp $(NLTK_REF)
	$(PY) benchmarks/bench_leaderboard.py --nltk-path $(NLTK_REF)

# offline-minilm (the honest setting: exclude_own_evidence) on all of dev, candidates stored
# for `averitec baseline r2vc ablations`, scored; the run summary has the gated_paper and
# ungated figures. The oracle corpus is the named configuration offline-minilm-oracle.
R2VC_OUT ?= results/r2vc_dev_offline_minilm.json
r2vc-dev: $(VENV)/.all-stamp
	mkdir -p results
	$(VENV)/bin/averitec baseline r2vc --config offline-minilm --out $(R2VC_OUT) --candidates results/r2vc-dev-candidates --resume
	$(VENV)/bin/averitec score $(R2VC_OUT) $(AVERITEC_DATA_DIR)/averitec/dev.json --profile averitec2024
	$(VENV)/bin/averitec calibration $(R2VC_OUT) $(AVERITEC_DATA_DIR)/averitec/dev.json --profile averitec2024

# The docs/r2vc.md table on the first R2VC_N dev claims: exclude_own_evidence (+ ablation rows
# from its stored candidates), own evidence (oracle corpus), gold evidence (oracle), official baseline.
R2VC_N ?= 500
r2vc-table: $(VENV)/.all-stamp
	$(PY) benchmarks/r2vc_offline_table.py --n $(R2VC_N) --out results/r2vc-table

# The paper's FEVER and VitaminC configurations with its hub ids (a GPU, the hub, and FEVER's
# wiki-pages + VitaminC under $AVERITEC_DATA_DIR/{fever,vitaminc}): data → SFT → DPO →
# calibrate → predict → score → table in results/r2vc-paper/<recipe>/table.md. A rerun
# continues where it stopped. r2vc-paper-ci runs the same command with tiny random models.
R2VC_PAPER_RECIPES ?= paper-fever paper-vitaminc
R2VC_PAPER_OUT ?= results/r2vc-paper
# The paper targets download models: the hub is on for them (HF_HUB_OFFLINE=1 on the command line wins).
r2vc-paper averitec-paper: HF_HUB_OFFLINE = 0
r2vc-paper averitec-paper: TRANSFORMERS_OFFLINE = 0
r2vc-paper averitec-paper: HF_DATASETS_OFFLINE = 0
# ... and find their data where `averitec data download` puts it, or under the caller's AVERITEC_DATA_DIR.
r2vc-paper averitec-paper: AVERITEC_DATA_DIR = $(USER_DATA_DIR)
r2vc-paper averitec-paper: NLTK_DATA = $(USER_NLTK_DATA)
# One command for both recipes: one generator (SFT and DPO trained once, both evaluation sets
# excluded), one slice decoding, one decoding per generator for every Table 2 row. Plan it first:
#   .venv/bin/averitec baseline r2vc paper --recipe paper-fever --recipe paper-vitaminc --plan --gpu h200
r2vc-paper: $(GPU_VENV)/.gpu-stamp
	$(GPU_VENV)/bin/averitec baseline r2vc paper $(addprefix --recipe ,$(R2VC_PAPER_RECIPES)) --work $(R2VC_PAPER_OUT)
# The same command with tiny random models and fixture data (CPU, a few minutes): R2VC_PAPER_OUT/paper_manifest.json.
r2vc-paper-ci: R2VC_PAPER_CI_OUT = $(if $(filter command line,$(origin R2VC_PAPER_OUT)),$(R2VC_PAPER_OUT),results/r2vc-paper-ci)
r2vc-paper-ci: $(VENV)/.all-stamp
	$(PY) benchmarks/r2vc_paper_ci.py $(R2VC_PAPER_CI_OUT)

# The AVeriTeC baseline (offline-minilm) on dev: every row of docs/averitec_baseline.md.
# AVERITEC_DEV_LIMIT=N runs the first N dev claims, scored against exactly those gold claims.
AVERITEC_DEV_OUT ?= results/averitec_baseline_dev
AVERITEC_DEV_LIMIT ?= 500
averitec-dev: $(VENV)/.all-stamp
	AVERITEC=$(abspath $(VENV))/bin/averitec PYTHON=$(abspath $(PY)) \
	  benchmarks/averitec_baseline_dev.sh $(AVERITEC_DEV_OUT) $(AVERITEC_DEV_LIMIT)

# The paper configuration from data to table (train reranker, verdict, justification -> run ->
# score -> table) with the hub ids, on a GPU machine: dev claims and the 2024 dev knowledge store where
# `averitec data download averitec --split dev` / `averitec data download averitec-store --split dev` put
# them (AVERITEC_STORE=<store dir> names another store). GPU venv, hub on: see r2vc-paper above.
# CI runs the same command with tiny random models (tests/test_averitec_baseline_pipeline.py).
# paper-bounded: BLOOM stops at the end of each question; AVERITEC_PAPER_CONFIG=paper is upstream's
# unbounded decoding (max_length 5000, no stop).
AVERITEC_PAPER_CONFIG ?= paper-bounded
AVERITEC_PAPER_OUT ?= results/averitec_paper
AVERITEC_PAPER_VARIANTS ?= full,no-reranker
averitec-paper: $(GPU_VENV)/.gpu-stamp
	$(GPU_VENV)/bin/averitec baseline averitec reproduce --config $(AVERITEC_PAPER_CONFIG) \
	  $(if $(AVERITEC_STORE),--store $(AVERITEC_STORE)) --out $(AVERITEC_PAPER_OUT) --variants $(AVERITEC_PAPER_VARIANTS)

clean:
	rm -rf $(VENV) $(GPU_VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
