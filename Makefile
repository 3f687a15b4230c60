# The two commands readers need: `make book` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: book pdf test bench clean venv venv-core check-html

venv: $(STAMP)

# the numerical core first (its pins from requirements.txt): numba can compile
# qlib's kernels while pip installs the rest (.ci/run does so on the idle core)
CORE_STAMP := $(VENV)/.core-installed
CORE_PINS = $(shell grep -E '^(numpy|numba|scipy|networkx|pytest)==' requirements.txt)
venv-core: $(CORE_STAMP)

$(CORE_STAMP): requirements.txt Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install $(CORE_PINS)
	touch $(CORE_STAMP)

$(STAMP): $(CORE_STAMP) requirements.txt pyproject.toml Makefile
	# requirements.txt pins qlib's dependencies and its optional extra qlib[sweep]
	# (dask[distributed], xarray, zarr), so the editable install needs --no-deps
	$(BIN)/python -m pip install -r requirements.txt
	$(BIN)/python -m pip install --no-deps -e .
	# the book's support package qbook (beside qlib, not in its wheel): a .pth line
	# puts the repository root on the venv's path, for chapters, tests and CI alike
	$(BIN)/python -c "import pathlib, sysconfig; pathlib.Path(sysconfig.get_paths()['purelib'], 'qbook.pth').write_text('$(CURDIR)\\n')"
	touch $(STAMP)

# jupyter-cache keys on a cell's source only, so the inputs every chapter
# reads (qlib, the pinned packages, the stored benchmark results) are hashed
# too: when they change, the cache and Sphinx's environment are cleared and
# every chapter re-executes; otherwise only edited chapters do.
INPUTS_HASH = $(shell cat requirements.txt $$(find qlib qbook benchmarks -name '*.py' -o -name '*.json' -o -name '*.pkl.gz' | LC_ALL=C sort) 2>/dev/null | sha256sum | cut -c1-16)

book: $(STAMP)
	@if [ "$$(cat _build/.inputs-hash 2>/dev/null)" != "$(INPUTS_HASH)" ]; then \
	  echo "qlib, requirements or stored results changed: every chapter re-executes"; \
	  rm -rf _build/.jupyter_cache _build/.doctrees _build/jupyter_execute; fi
	$(BIN)/python tools/execute_chapters.py
	$(BIN)/jupyter-book build .
	@echo "$(INPUTS_HASH)" > _build/.inputs-hash
	@echo "The book is at file://$(CURDIR)/_build/html/index.html"

# the whole book as one PDF (XeLaTeX, for the prose's Unicode): LaTeX comes from the
# distribution's packages and is installed by this target only (`make book` and
# `make test` never need it); the chapters execute into the same cache as `make book`
TEX_PACKAGES = texlive-xetex texlive-latex-recommended texlive-latex-extra \
  texlive-fonts-recommended texlive-plain-generic latexmk lmodern fonts-freefont-otf xindy
pdf: $(STAMP)
	command -v xelatex >/dev/null && command -v latexmk >/dev/null || \
	  (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(TEX_PACKAGES))
	@if [ "$$(cat _build/.inputs-hash 2>/dev/null)" != "$(INPUTS_HASH)" ]; then \
	  echo "qlib, requirements or stored results changed: every chapter re-executes"; \
	  rm -rf _build/.jupyter_cache _build/.doctrees _build/jupyter_execute; fi
	$(BIN)/python tools/execute_chapters.py
	$(BIN)/jupyter-book build . --builder pdflatex
	@echo "$(INPUTS_HASH)" > _build/.inputs-hash
	$(BIN)/python tools/check_pdf.py _build/latex/book.pdf
	# the intro's link to the PDF points here (the HTML book's static folder)
	mkdir -p _build/html/_static && cp _build/latex/book.pdf _build/html/_static/book.pdf
	@echo "The PDF is at $(CURDIR)/_build/latex/book.pdf"

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadscope --no-loadscope-reorder --durations=12

# a real browser over every built page (run `make book` first): MathJax
# typeset everything, no JavaScript errors, screenshots in _build/screenshots/
check-html: $(STAMP)
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)
	$(BIN)/python tools/check_html.py

# the peers (SimPy, Ciw) are needed by the benchmarks only, never by book/test
bench: $(STAMP)
	$(BIN)/python -m pip install -r benchmarks/requirements.txt
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf _build .pytest_cache .hypothesis
	find . -name __pycache__ -prune -exec rm -rf {} +
