# kg: two commands set everything up on a fresh machine.
#   make run   -> install into .venv, then build outputs/ from seeds/
#   make test  -> install into .venv (with test tools and Chromium), then run the test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: run test install install-test bench clean

run: install
	$(BIN)/kg build seeds --out outputs

test: install-test
	$(BIN)/python -m pytest -q

bench: install-test
	$(BIN)/python -m benchmarks

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# torch first, pinned to the CPU build, so nothing later pulls a CUDA build.
$(STAMP): $(BIN)/python pyproject.toml constraints.txt
	$(BIN)/pip install -q torch==2.13.0
	# (setuptools prints a notice on every editable install, whatever the project: "Editable installation ...
	# be careful with folders ... with the same name as your package"; it is no fault of kg's and is silenced)
	PYTHONWARNINGS="ignore:Editable installation" $(BIN)/pip install -q -c constraints.txt -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

# Debian's Chromium for the browser tests (never Playwright's own browser download), and
# tesseract-ocr, which reads the map's labels off a screenshot as a person would.
install-test: install
	@command -v chromium >/dev/null 2>&1 && command -v tesseract >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium and tesseract-ocr for the browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium tesseract-ocr >/dev/null; }

clean:
	rm -rf $(VENV) outputs/*.ttl outputs/*.nt outputs/*.jsonld outputs/*.html outputs/*.json outputs/*.jsonl
