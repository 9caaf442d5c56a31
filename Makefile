# Two commands a newcomer needs: `make plan` (what a stack deploys, offline) and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# checkov in a venv of its own: it pins a botocore older than the project's.
VENV_CHECKOV ?= .venv-checkov
STACK ?= dev

BASE ?= origin/main

.PHONY: plan plan-all plan-diff promote preflight test lint format bench check-versions clean

# The venv is rebuilt whenever a requirements file changes.
$(VENV)/.installed: requirements.txt requirements-dev.txt policy/requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

$(VENV_CHECKOV)/.installed: requirements-checkov.txt
	test -x $(VENV_CHECKOV)/bin/python || $(PYTHON) -m venv $(VENV_CHECKOV)
	$(VENV_CHECKOV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-checkov.txt
	touch $@

plan: $(VENV)/.installed  ## make plan [STACK=dev]: write build/plan/$(STACK)/ and print its summary
	$(PY) -m tools.plan --stack $(STACK)

plan-all: $(VENV)/.installed  ## plan every Pulumi.<stack>.yaml here and in configs/examples/
	for file in Pulumi.*.yaml configs/examples/Pulumi.*.yaml; do \
	  stack=$$(basename $$file .yaml); $(PY) -m tools.plan --stack $${stack#Pulumi.} > /dev/null || exit 1; \
	done

plan-diff: $(VENV)/.installed  ## make plan-diff STACK=dev BASE=origin/main: unified diff of the plan
	@$(PY) -m tools.plan_diff --stack $(STACK) --base $(BASE)

promote: $(VENV)/.installed  ## make promote FROM=dev TO=staging [HOTFIX=1]: copy the release block
	$(PY) -m tools.promote --from $(FROM) --to $(TO) $(if $(HOTFIX),--hotfix)

test: lint $(VENV_CHECKOV)/.installed  ## lint, then every test (pure core, mock-engine runs, schema validation, checkov)
	$(PY) -m pytest

preflight: $(VENV)/.installed  ## make preflight STACK=dev: read-only checks of the real AWS account (and an existing cluster) before `pulumi up`
	$(PY) -m tools.preflight --stack $(STACK)

check-versions: $(VENV)/.installed  ## read the chart repositories' live indexes again (needs network)
	$(PY) -m tools.check_versions

bench: $(VENV)/.installed  ## time make plan against a bare SDK import and 20 vs 1 deployments
	$(PY) -m tools.bench

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(VENV)/.installed
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

clean:
	rm -rf build .pytest_cache
