# duroxide-go — see README.md for what each target needs.
GO            ?= go
STATICCHECK   ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
# controller-tools v0.21 is the release built against Kubernetes 0.36, which this module uses.
CONTROLLER_GEN ?= sigs.k8s.io/controller-tools/cmd/controller-gen@v0.21.0
GOTESTFLAGS   ?= -race -count=1 -timeout 20m
BIN           := bin
# The library is the root module; the operator's half (api, controllers, cmd/manager) and the
# OTLP exporters (otlp, cmd/sample-worker) are modules of their own, so a library user's module
# graph has no Kubernetes or gRPC in it. go.work builds them together; `./...` alone stops at a
# nested module's folder.
MODULES       := . api controllers cmd/manager otlp cmd/sample-worker
PKGS          := ./... ./api/... ./controllers/... ./cmd/manager/... ./otlp/... ./cmd/sample-worker/...


.PHONY: mod-check sqlc-check vet-samples test-examples test-fast
.PHONY: bench-store chaos operator-memory all build binaries images test-e2e dev dev-down kind-deploy lint-scripts demo bench generate manifests test test-short lint vet fmt fmt-check conformance clean help

all: build

## build: compile every package and the binaries under cmd/
build:
	$(GO) build $(PKGS)

IMAGE_TAG ?= latest
OPERATOR_IMAGE ?= duroxide/operator:$(IMAGE_TAG)
WORKER_IMAGE   ?= duroxide/sample-worker:$(IMAGE_TAG)

## binaries: static linux binaries of the operator, the sample worker and the duroxide CLI in bin/
## (-buildvcs=auto: `duroxide version` names the commit even where GOFLAGS turns VCS stamping off)
binaries:
	CGO_ENABLED=0 GOOS=linux $(GO) build -trimpath -ldflags='-s -w' -o $(BIN)/manager ./cmd/manager
	CGO_ENABLED=0 GOOS=linux $(GO) build -trimpath -ldflags='-s -w' -o $(BIN)/sample-worker ./cmd/sample-worker
	CGO_ENABLED=0 GOOS=linux $(GO) build -trimpath -buildvcs=auto -ldflags='-s -w' -o $(BIN)/duroxide ./cmd/duroxide

## images: FROM-scratch image tarballs of both (bin/images/*.tar; no Docker needed)
images: binaries
	$(GO) run ./hack/imagebuild -binary $(BIN)/manager -tag $(OPERATOR_IMAGE) -out $(BIN)/images/operator.tar
	$(GO) run ./hack/imagebuild -binary $(BIN)/sample-worker -tag $(WORKER_IMAGE) -out $(BIN)/images/sample-worker.tar

## test-e2e: the end-to-end test on a single-node cluster of host processes (root; see README)
test-e2e:
	hack/e2e.sh

## dev: a local cluster with the operator and PostgreSQL, left running (root; prints the KUBECONFIG)
dev:
	@hack/dev.sh up

## dev-down: remove what `make dev` started
dev-down:
	hack/dev.sh down

## kind-deploy: operator and samples on a kind cluster (needs Docker that allows privileged containers)
kind-deploy:
	hack/kind-up.sh

## generate: deepcopy methods of the API types (controller-gen), and the stores' typed SQL
## (sqlc: provider/*/internal/dbsqlc/*.sql into Go; hack/sqlc.sh)
generate:
	$(GO) run $(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...
	hack/sqlc.sh generate

## sqlc-check: fail when the stores' generated SQL code is stale (run `make generate`)
sqlc-check:
	@hack/sqlc.sh diff || { echo "the generated SQL code is stale: run 'make generate'"; exit 1; }

## manifests: CRDs (config/crd/bases) and the operator's ClusterRole (config/rbac/role.yaml) from the markers (controller-gen)
manifests:
	$(GO) run $(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=config/crd/bases
	$(GO) run $(CONTROLLER_GEN) rbac:roleName=manager-role paths=./controllers/... output:rbac:artifacts:config=config/rbac

## demo: run every sample orchestration embedded on SQLite (demo.db, kept for `duroxide ui`) and print the results
demo:
	$(GO) run ./cmd/demo -db demo.db

## bench: the benchmark scenarios on PostgreSQL (throwaway server) and SQLite; BENCHFLAGS passes flags
bench:
	hack/test-postgres.sh run $(GO) run ./cmd/bench $(BENCHFLAGS)

## bench-store: each store's cost of a timer orchestration's two turns (go test -bench, providertest.BenchmarkTimerTurns)
bench-store:
	hack/test-postgres.sh run $(GO) test -run '^$$' -bench TimerTurns -benchtime 2000x -count 3 ./provider/sqlite ./provider/postgres

## chaos: orchestrations on worker processes killed (SIGKILL) every 1-3 s and one PostgreSQL
## crash-restart, then every instance, history and queue checked; PostgreSQL, then SQLite
CHAOS_ORCHESTRATIONS ?= 2000
CHAOS_DURATION ?= 30s
chaos:
	$(GO) build -o $(BIN)/chaos ./cmd/chaos
	hack/test-postgres.sh run $(BIN)/chaos --store postgres --orchestrations $(CHAOS_ORCHESTRATIONS) --workers 4 --duration $(CHAOS_DURATION)
	$(BIN)/chaos --store sqlite --orchestrations $$(( $(CHAOS_ORCHESTRATIONS) / 2 )) --workers 3 --duration $(CHAOS_DURATION)

## operator-memory: the operator's RSS with 5,000 Orchestrations of 10 KiB input (manager binary on envtest)
operator-memory:
	assets=$$(hack/k8s-binaries.sh) && KUBEBUILDER_ASSETS=$$assets hack/test-postgres.sh run $(GO) test -count=1 -v -timeout 30m ./cmd/manager -run TestOperatorMemory -objects 5000

## test: vet, formatting check, then every test under the race detector, with a
## throwaway PostgreSQL (installed if missing; DUROXIDE_TEST_POSTGRES_URL uses yours),
## kube-apiserver + etcd for envtest (built once from the module proxy, then cached) and a
## headless Chromium for the web view (hack/chromium.sh: installed from Debian if missing)
test: vet fmt-check
	assets=$$(hack/k8s-binaries.sh) && chromium=$$(hack/chromium.sh) && \
	  KUBEBUILDER_ASSETS=$$assets DUROXIDE_TEST_CHROMIUM=$$chromium hack/test-postgres.sh run $(GO) test $(GOTESTFLAGS) $(PKGS)
	$(MAKE) --no-print-directory test-examples

## test-examples: the example user module (examples/testkit: its own go.mod, replace to this clone) unit-tests
## an orchestration with the test kit, as a user's module would
test-examples:
	cd examples/testkit && export GOWORK=off && $(GO) mod tidy -diff && $(GO) vet ./... && $(GO) test -count=1 ./...

## test-fast: the contributor loop, SQLite only, no race detector: -short skips what needs PostgreSQL
## or envtest, saying so (go test -short -v shows each skip)
test-fast:
	$(GO) test -short -count=1 $(PKGS)
	@echo "test-fast: PostgreSQL, envtest and controller tests were skipped (-short); make test runs everything"

## test-short: the tests without the race detector (faster local loop)
test-short:
	assets=$$(hack/k8s-binaries.sh) && chromium=$$(hack/chromium.sh) && \
	  KUBEBUILDER_ASSETS=$$assets DUROXIDE_TEST_CHROMIUM=$$chromium hack/test-postgres.sh run $(GO) test -count=1 $(PKGS)

## conformance: the provider conformance suite on SQLite and PostgreSQL, one line per case
conformance:
	hack/test-postgres.sh run $(GO) test -count=1 -run Conformance -v ./provider/sqlite/ ./provider/postgres/

## lint: go vet, gofmt, staticcheck, a tidy go.mod, current generated SQL, the determinism analyzer on
## samples/, and the shell scripts
lint: vet fmt-check lint-scripts mod-check sqlc-check vet-samples
	$(GO) run $(STATICCHECK) $(PKGS)

## mod-check: fail when a module's go.mod or go.sum is not tidy (prints the diff `go mod tidy` would make)
mod-check:
	@for m in $(MODULES); do (cd $$m && $(GO) mod tidy -diff) || { echo "$$m: go.mod/go.sum are not tidy: run 'go mod tidy' there"; exit 1; }; done

## vet-samples: the duroxide determinism analyzer (duroxide vet) on the sample orchestrations
vet-samples:
	$(GO) build -o $(BIN)/duroxide ./cmd/duroxide
	$(BIN)/duroxide vet ./samples/...

lint-scripts:
	@for f in hack/*.sh hack/cluster/*.sh .ci/run; do bash -n "$$f" || exit 1; done
	@if command -v shellcheck >/dev/null; then shellcheck -S warning hack/*.sh hack/cluster/*.sh .ci/run; else echo "shellcheck not installed: bash -n only"; fi

vet:
	$(GO) vet $(PKGS)

fmt:
	gofmt -w .

fmt-check:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

clean:
	rm -rf $(BIN)

help:
	@grep -E '^## ' Makefile | sed 's/^## //'
