# `make demo` and `make test` each create the virtual environment first if it is missing.
VENV    ?= .venv
PY      := $(VENV)/bin/python
BIN     := $(VENV)/bin
DEMO    ?= demo_out
WORKERS ?= 2
export HF_HUB_OFFLINE := 1
export FORCE_QWENVL_VIDEO_READER := decord
export VDG_CACHE ?= $(abspath $(DEMO))/cache
# lmms-eval's own command, unchanged, with a line every few seconds while it starts (silent for 15-30 s otherwise).
LMMS_EVAL := $(PY) -m vdg_tasks.lmms.announced
# vdgsynth's core audit, blind, and the conditions written through the public API (detail: downscale*, blur;
# audio: mute, which the listening probe tells from black).
SYNTH_TASKS := vdgsynth_vdg,vdgsynth_vdg_blind,vdgsynth_vdg_detail,vdgsynth_vdg_audio

.PHONY: venv demo test test-fast lint yamls clean

# pyproject.toml declares ranges; the tested versions are pinned in .ci/constraints.txt.
CONSTRAINTS := .ci/constraints.txt

$(VENV)/.installed: pyproject.toml $(CONSTRAINTS)
	test -x $(PY) || python3 -m venv $(VENV)
	@echo "venv: installing vdg with lmms-eval, torch, PyAV, decord, scikit-learn and the test tools (versions pinned in $(CONSTRAINTS)); pip lists each package, then a bar while it installs"
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install --progress-bar on -c $(CONSTRAINTS) -e '.[test]'
	@# every-eval-ever (the `interchange` extra's validator, which the tests run) declares Python >= 3.12 and older
	@# huggingface-hub and rich than lmms-eval's; its validator runs here on 3.11 with these, so it comes without them.
	$(PY) -m pip install -q --no-deps --ignore-requires-python -c $(CONSTRAINTS) every-eval-ever
	touch $@

venv: $(VENV)/.installed

# The synthetic benchmark and synthetic episodes through lmms-eval, end to end: generate,
# materialize every condition, evaluate the reference models on all of them, audit the questions'
# text alone (vdg shortcuts, vdg debias), judge the open answers with the offline scorer, report.
demo: venv
	$(BIN)/vdg synth
	$(BIN)/vdg synth-episodes
	$(BIN)/vdg materialize --tasks $(SYNTH_TASKS),infinibench_ga_vdg_tracking --workers $(WORKERS)
	$(LMMS_EVAL) --model vdg_probe --include_path "$$($(BIN)/vdg tasks-path)" --tasks $(SYNTH_TASKS) \
		--log_samples --output_path $(DEMO)/runs/probe --verbosity WARNING
	$(LMMS_EVAL) --model vdg_probe --model_args order_blind=True --include_path "$$($(BIN)/vdg tasks-path)" \
		--tasks $(SYNTH_TASKS) --log_samples --output_path $(DEMO)/runs/probe_blind --verbosity WARNING
	$(LMMS_EVAL) --model vdg_chance --model_args seed=1 --include_path "$$($(BIN)/vdg tasks-path)" \
		--tasks $(SYNTH_TASKS) --log_samples --output_path $(DEMO)/runs/chance --verbosity WARNING
	$(LMMS_EVAL) --model vdg_probe --model_args listen=True --include_path "$$($(BIN)/vdg tasks-path)" \
		--tasks $(SYNTH_TASKS) --log_samples --output_path $(DEMO)/runs/probe_listening --verbosity WARNING
	$(LMMS_EVAL) --model vdg_probe --model_args max_num_frames=16 --include_path "$$($(BIN)/vdg tasks-path)" \
		--tasks infinibench_ga_vdg_tracking --log_samples --output_path $(DEMO)/runs/episodes --verbosity WARNING
	$(LMMS_EVAL) --model vdg_probe --model_args max_num_frames=16,name_mode=blind \
		--include_path "$$($(BIN)/vdg tasks-path)" --tasks infinibench_ga_vdg_tracking --log_samples \
		--output_path $(DEMO)/runs/episodes_name_blind --verbosity WARNING
	$(BIN)/vdg shortcuts vdgsynth --out $(DEMO)/shortcuts
	$(BIN)/vdg debias vdgsynth --frac 0.25 --out $(DEMO)/debias
	$(BIN)/vdg report probe=$(DEMO)/runs/probe probe_blind=$(DEMO)/runs/probe_blind chance=$(DEMO)/runs/chance \
		probe_listening=$(DEMO)/runs/probe_listening \
		probe_episodes=$(DEMO)/runs/episodes probe_name_blind=$(DEMO)/runs/episodes_name_blind \
		--shortcuts $(DEMO)/shortcuts/shortcuts.csv \
		$$(for f in $(DEMO)/debias/*.json; do printf -- '--question-set %s=%s ' "$$(basename $$f .json)" "$$f"; done) \
		--judge offline --out $(DEMO)/report

# Every test, on every core (pytest-xdist; a test module stays on one worker, so its module-scoped fixtures are built
# once): what CI runs (.ci/run).
test: venv
	$(PY) -m pytest -q -n auto --dist loadfile

# Every module's logic without lmms-eval runs, video encoding beyond a few frames or venv builds (tests marked `slow`),
# on every core (pytest-xdist, idle workers take queued tests from busy ones): under 3 minutes on 2 cores.
# Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE): pytest then keeps each test
# module's rewritten asserts, and a second run collects in about half the time.
test-fast: venv
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -q -m "not slow" -n auto --dist worksteal

# mypy checks the public Python API ([tool.mypy] in pyproject.toml); `make test` runs it too (tests/test_typing.py).
# The import contract (which room of vdg may import which) and the import graph's circles: tests/test_import_graph.py.
lint: venv
	$(BIN)/ruff check vdg_tasks model_wrappers postprocess tests benchmarks
	$(BIN)/mypy
	$(PY) -m pytest -q -p no:cacheprovider tests/test_import_graph.py

yamls: venv
	$(BIN)/vdg write-yamls

clean:
	rm -rf $(DEMO) .pytest_cache
