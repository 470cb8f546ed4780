# The two commands a newcomer needs: `make demo` and `make test`. Both build .venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test bench check fuzz demo clean

$(STAMP): setup.cfg pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip 'setuptools>=77'
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m pytest

check: $(STAMP)
	$(PY) -m pytest tests/test_conventions.py

bench: $(STAMP)
	$(PY) -m bench

fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(PY) -m pytest tests -k "fuzz or property or stateful" -p no:randomly

demo: $(STAMP)
	$(PY) -m genericserver demo

clean:
	rm -rf $(VENV) build *.egg-info
