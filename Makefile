# `make demo` and `make test` each create the virtual environment first if it is missing.
VENV    ?= .venv
PY      := $(VENV)/bin/python
BIN     := $(VENV)/bin
DEMO    ?= demo_out
WORKERS ?= 2
export HF_HUB_OFFLINE := 1
export FORCE_QWENVL_VIDEO_READER := decord
export VDG_CACHE ?= $(CURDIR)/$(DEMO)/cache

.PHONY: venv demo test lint yamls clean

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

venv: $(VENV)/.installed

# The synthetic benchmark through lmms-eval, end to end: generate, materialize every condition,
# evaluate three reference models on all of them, report.
demo: venv
	$(BIN)/vdg synth
	$(BIN)/vdg materialize --tasks vdgsynth_vdg --workers $(WORKERS)
	$(BIN)/lmms-eval --model vdg_probe --include_path "$$($(BIN)/vdg tasks-path)" --tasks vdgsynth_vdg \
		--log_samples --output_path $(DEMO)/runs/probe --verbosity WARNING
	$(BIN)/lmms-eval --model vdg_probe --model_args order_blind=True --include_path "$$($(BIN)/vdg tasks-path)" \
		--tasks vdgsynth_vdg --log_samples --output_path $(DEMO)/runs/probe_blind --verbosity WARNING
	$(BIN)/lmms-eval --model vdg_chance --model_args seed=1 --include_path "$$($(BIN)/vdg tasks-path)" \
		--tasks vdgsynth_vdg --log_samples --output_path $(DEMO)/runs/chance --verbosity WARNING
	$(BIN)/vdg report probe=$(DEMO)/runs/probe probe_blind=$(DEMO)/runs/probe_blind chance=$(DEMO)/runs/chance \
		--out $(DEMO)/report

test: venv
	$(PY) -m pytest -q

lint: venv
	$(BIN)/ruff check vdg_tasks model_wrappers postprocess tests benchmarks

yamls: venv
	$(BIN)/vdg write-yamls

clean:
	rm -rf $(DEMO) .pytest_cache
