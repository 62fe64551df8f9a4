# Two entry points: `make demo` and `make test`. Both create/refresh .venv in the repo root.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
SHARED ?= $(abspath ../shared)
export AVERITEC_DATA_DIR ?= $(SHARED)/data
export NLTK_DATA ?= $(SHARED)/nltk_data
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

.PHONY: venv venv-core venv-all demo test lint typecheck bench clean

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

venv-core: $(VENV)/.core-stamp
venv-all: $(VENV)/.all-stamp
venv: venv-all

demo: $(VENV)/.core-stamp
	$(VENV)/bin/averitec score examples/demo_predictions.json examples/demo_gold.json --profile averitec2024

test: $(VENV)/.all-stamp
	$(PY) -m pytest -q

lint: $(VENV)/.core-stamp
	$(VENV)/bin/ruff check averitec_tools tests benchmarks
	$(VENV)/bin/mypy

bench: $(VENV)/.core-stamp
	$(PY) benchmarks/bench_scorer.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
