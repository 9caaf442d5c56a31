# Two commands a newcomer needs: `make plan` (what a stack deploys, offline) and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# checkov in a venv of its own: it pins a botocore older than the project's.
VENV_CHECKOV ?= .venv-checkov
# Dynamo's own argument parsers, one small venv per release of configs/dynamo/versions.yaml.
VENV_DYNAMO ?= .venv-dynamo
# Dynamo 1.6.1's frontend, mocker and Planner, which `make trial` runs (tools/trial.py), and NVIDIA AISimulate,
# which make simulate, make estimate, make recommend and make mocker-timing run (requirements-trial.txt).
VENV_TRIAL ?= .venv-trial
STACK ?= dev

BASE ?= origin/main

# Python caches each module's bytecode (__pycache__/, ignored by git) unless PYTHONDONTWRITEBYTECODE is set,
# as it is on some CI machines and sandboxes: then every command compiled the project's 110 modules again
# (0.4-1 s of each make plan here, and of each plan the tests run in a fresh process).
unexport PYTHONDONTWRITEBYTECODE

.DEFAULT_GOAL := help
.PHONY: help docs plan plan-all plan-diff promote check-upgrade preflight test trial simulate mocker-timing estimate recommend lint format bench check-versions vendor-json clean

help:  ## list the targets (the default)
	@awk -F ':.*## ' '/^[a-z-]+:.*## / {printf "  %-15s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# The venvs are rebuilt whenever a requirements file changes. pip prints each package it fetches
# (a live progress bar in a terminal, one line per download in CI).
$(VENV)/.installed: requirements.txt requirements-dev.txt policy/requirements.txt
	@echo "==> $(VENV): installing requirements-dev.txt (the first time takes a minute or two)"
	@test -x $(PY) || { echo "==> creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); }
	$(PY) -m pip install --disable-pip-version-check -r requirements-dev.txt
	@touch $@
	@echo "==> $(VENV) is ready"

$(VENV_CHECKOV)/.installed: requirements-checkov.txt
	@echo "==> $(VENV_CHECKOV): installing checkov (requirements-checkov.txt), which the tests run"
	@test -x $(VENV_CHECKOV)/bin/python || { echo "==> creating $(VENV_CHECKOV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV_CHECKOV); }
	$(VENV_CHECKOV)/bin/python -m pip install --disable-pip-version-check -r requirements-checkov.txt
	@touch $@
	@echo "==> $(VENV_CHECKOV) is ready"

$(VENV_DYNAMO)/.installed: $(VENV)/.installed configs/dynamo/versions.yaml requirements-dynamo-parsers.txt
	@echo "==> $(VENV_DYNAMO): each Dynamo release's ai-dynamo wheels, whose argument parsers the tests run"
	$(PY) -m gpt_oss_infra dynamo-parsers install --into $(VENV_DYNAMO)
	@touch $@

$(VENV_TRIAL)/.installed: requirements-trial.txt
	@echo "==> $(VENV_TRIAL): Dynamo 1.6.1's runtime: frontend, mocker, Planner (requirements-trial.txt)"
	@test -x $(VENV_TRIAL)/bin/python || $(PYTHON) -m venv $(VENV_TRIAL)
	$(VENV_TRIAL)/bin/python -m pip install --disable-pip-version-check --no-deps -r requirements-trial.txt
	@touch $@

plan: $(VENV)/.installed  ## make plan [STACK=dev]: write build/plan/<STACK>/ and print its summary
	$(PY) -m gpt_oss_infra plan --stack $(STACK)

plan-all: $(VENV)/.installed  ## plan every Pulumi.<stack>.yaml here and in configs/examples/, and examples/own-cluster
	for file in Pulumi.*.yaml configs/examples/Pulumi.*.yaml; do \
	  stack=$$(basename $$file .yaml); $(PY) -m gpt_oss_infra plan --stack $${stack#Pulumi.} > /dev/null || exit 1; \
	done
	$(PY) -m gpt_oss_infra plan --program-dir examples/own-cluster --stack dev --out build/plan/examples/own-cluster > /dev/null

plan-diff: $(VENV)/.installed  ## make plan-diff STACK=dev BASE=origin/main: unified diff of the plan
	@$(PY) -m gpt_oss_infra plan-diff --stack $(STACK) --base $(BASE)

promote: $(VENV)/.installed  ## make promote FROM=dev TO=staging [HOTFIX=1] [STEP=1] [DOWNGRADE=1]: copy the release block (STEP: one Dynamo minor at a time)
	$(PY) -m gpt_oss_infra promote --from $(FROM) --to $(TO) $(if $(HOTFIX),--hotfix) $(if $(STEP),--step) $(if $(DOWNGRADE),--downgrade)

check-upgrade: $(VENV)/.installed  ## make check-upgrade STACK=dev LIVE=1.2.1 [STEP=1]: may a pulumi up go from LIVE to the stack file's Dynamo release?
	$(PY) -m gpt_oss_infra promote --to $(STACK) --live $(LIVE) $(if $(STEP),--step)

test: lint $(VENV_CHECKOV)/.installed $(VENV_DYNAMO)/.installed $(VENV_TRIAL)/.installed  ## lint, then every test (pure core, mock-engine runs, schema validation, checkov, Dynamo's parsers, the trial, the replay, AISimulate)
	$(PY) -m pytest -n 3 --dist loadgroup

docs: $(VENV)/.installed  ## the manual: write docs/config.md's reference from the config models, build the site into build/site
	$(PY) -m gpt_oss_infra config-reference
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

trial: $(VENV)/.installed $(VENV_TRIAL)/.installed  ## the trial stack's graphs served by real Dynamo 1.6.1 here, no GPU: smoke test and benchmark (simulated)
	$(PY) -m gpt_oss_infra trial

simulate: $(VENV)/.installed $(VENV_TRIAL)/.installed  ## replay every shipped deployment's traffic, static, with the Planner and the oracle (Dynamo 1.6.1's dynamo.replay): configs/simulated.yaml [STACK=name] [AGAIN=1: replay unchanged ones too]
	$(PY) -m gpt_oss_infra simulate $(if $(filter command line,$(origin STACK)),--stack $(STACK)) $(if $(AGAIN),--again)

mocker-timing: $(VENV)/.installed $(VENV_TRIAL)/.installed  ## model the mocker's timing tables with NVIDIA AISimulate (configs/mocker-timing/)
	$(PY) -m gpt_oss_infra mocker-timing --simulator-python $(VENV_TRIAL)/bin/python

estimate: $(VENV)/.installed $(VENV_TRIAL)/.installed  ## model every recipe with NVIDIA AISimulate into configs/estimates.yaml [RECIPE=name]
	$(PY) -m gpt_oss_infra estimate --simulator-python $(VENV_TRIAL)/bin/python $(if $(RECIPE),--recipe $(RECIPE))

recommend: $(VENV)/.installed $(VENV_TRIAL)/.installed  ## make recommend HARDWARE=h200 GPUS=8 TTFT_MS=1000 TPOT_MS=10 ISL=1024 OSL=1024 [NAME=]: a recipe from AISimulate's best configuration
	$(PY) -m gpt_oss_infra recommend --simulator-python $(VENV_TRIAL)/bin/python --hardware $(HARDWARE) --gpus $(GPUS) --ttft-ms $(TTFT_MS) --tpot-ms $(TPOT_MS) --isl $(ISL) --osl $(OSL) $(if $(NAME),--name $(NAME))

preflight: $(VENV)/.installed  ## make preflight STACK=dev: read-only checks of the real AWS account (and an existing cluster) before `pulumi up`
	$(PY) -m gpt_oss_infra preflight --stack $(STACK)

check-versions: $(VENV)/.installed  ## read the chart repositories' live indexes again (needs network)
	$(PY) -m gpt_oss_infra check-versions

bench: $(VENV)/.installed $(VENV_CHECKOV)/.installed $(VENV_DYNAMO)/.installed $(VENV_TRIAL)/.installed  ## time make plan (against importing its SDK classes alone; 20 vs 1 deployments), the unit and program tests, the whole pytest, make estimate
	$(PY) -m gpt_oss_infra bench

vendor-json: $(VENV)/.installed  ## after adding or updating a vendored CRD, updating botocore or adding an operation to configs/aws-api/mapping.yaml: write the JSON the program reads
	$(PY) -m gpt_oss_infra vendor-json

lint: $(VENV)/.installed  ## ruff check, ruff format --check, and mypy --strict on the public API, the components and the core
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

format: $(VENV)/.installed  ## apply ruff's fixes and formatting
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

clean:  ## remove build/ and the pytest cache
	rm -rf build .pytest_cache
