# Two commands a newcomer needs: `make plan` (what a stack deploys, offline) and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STACK ?= dev

.PHONY: plan plan-all test lint format bench clean

# The venv is rebuilt whenever a requirements file changes.
$(VENV)/.installed: requirements.txt requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

plan: $(VENV)/.installed  ## make plan [STACK=dev]: write build/plan/$(STACK)/ and print its summary
	$(PY) -m tools.plan --stack $(STACK)

plan-all: $(VENV)/.installed  ## plan every Pulumi.<stack>.yaml
	for file in Pulumi.*.yaml; do stack=$${file#Pulumi.}; $(PY) -m tools.plan --stack $${stack%.yaml} > /dev/null || exit 1; done

test: lint  ## lint, then every test (pure core, mock-engine runs, schema validation)
	$(PY) -m pytest

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(VENV)/.installed
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

clean:
	rm -rf build .pytest_cache
