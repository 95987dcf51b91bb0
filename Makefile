# gpufleet.sglang: one entry point for setup, tests, the lab and the demo. `make help` lists the targets.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

ROOT := $(CURDIR)
VENV ?= $(ROOT)/.venv
export PATH := $(VENV)/bin:$(PATH)
export ANSIBLE_CONFIG := $(ROOT)/ansible.cfg
export ANSIBLE_COLLECTIONS_PATH := $(ROOT)/build/collections
export XDG_CACHE_HOME := $(ROOT)/build/cache
export ANSIBLE_HOME := $(ROOT)/build/ansible
export MOLECULE_GLOB := molecule/*/molecule.yml
LAB := $(ROOT)/tools/lab/lab
COLLECTION_LINK := build/collections/ansible_collections/gpufleet/sglang
# Scenarios that do not pass end to end yet stay out of `make test` until they do; run them by name
# (`make molecule SCENARIOS=gateway`). docs/testing.md says why each is here.
MOLECULE_NOT_YET :=
SCENARIOS ?= $(filter-out $(MOLECULE_NOT_YET),$(sort $(notdir $(patsubst %/molecule.yml,%,$(wildcard molecule/*/molecule.yml)))))

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z][a-z-]*:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

.PHONY: venv
venv: ## make .venv with the pinned toolchain and make gpufleet.sglang resolvable from this checkout
	@tools/dev/system-packages venv
	@tools/dev/bootstrap
	@mkdir -p $(dir $(COLLECTION_LINK)) && ln -sfn ../../../.. $(COLLECTION_LINK)

# The lab root filesystem, the wheelhouse and the two venvs are mostly downloads: `make test` builds them in the
# background (log: build/prerequisites.log) while lint, the collection checks and sanity keep the CPUs busy.
# Their system packages come first, so two apt-get runs never race for dpkg's lock.
.PHONY: test
test: venv ## THE test command: lint, collection checks, sanity, units, then every Molecule scenario
	@tools/dev/system-packages sanity lab
	@set -m; mkdir -p build; \
	$(MAKE) --no-print-directory prerequisites >build/prerequisites.log 2>&1 & builder=$$!; \
	trap 'kill -- -$$builder 2>/dev/null || true' EXIT; \
	$(MAKE) --no-print-directory lint collection-checks sanity; \
	echo "make test: waiting for the lab root filesystem, the wheelhouse and the venvs (build/prerequisites.log)"; \
	if ! wait $$builder; then \
	  tail -n 60 build/prerequisites.log; \
	  echo "make test: building the prerequisites failed; the whole log is build/prerequisites.log" >&2; exit 1; \
	fi; \
	trap - EXIT; grep -E '^(lab|wheelhouse|sglang-cpu-venv|gateway-venv)' build/prerequisites.log || true
	$(MAKE) --no-print-directory units molecule
	@echo "make test: all steps passed"

.PHONY: prerequisites
prerequisites: lab-rootfs wheelhouse sglang-cpu-venv gateway-venv ## what units and Molecule need built: lab root filesystem, wheelhouse, real SGLang and smg venvs (cached)

.PHONY: lint
lint: venv ## yamllint and ansible-lint (production profile, offline)
	yamllint --strict .
	ansible-lint --offline --profile production

.PHONY: collection-checks
collection-checks: venv ## antsibull-docs lint-collection-docs, antsibull-changelog lint and CHANGELOG.md current
	tools/dev/collection-docs-lint
	tools/dev/changelog --check

.PHONY: docs
docs: venv ## the collection's docsite (modules, roles, filters, the guides of docs/) in build/docs/html
	tools/dev/docs

.PHONY: changelog
changelog: venv ## render CHANGELOG.md from changelogs/ (add a fragment in changelogs/fragments/ first)
	tools/dev/changelog

.PHONY: sanity
sanity: venv ## ansible-test sanity from a generated ansible_collections tree
	@tools/dev/system-packages sanity
	tools/dev/sanity

.PHONY: units
units: venv lab-rootfs wheelhouse sglang-cpu-venv gateway-venv ## pytest: plugins, stand-ins, the lab tool (boots real lab hosts), real SGLang on CPU, a real smg gateway
	GPUFLEET_SGLANG_CPU_VENV="$$(tools/dev/sglang-cpu-venv)" GPUFLEET_GATEWAY_VENV="$$(tools/dev/gateway-venv)" python -m pytest

.PHONY: gateway-venv
gateway-venv: ## the pinned smg gateway in build/gateway-venv/ for the gateway module's tests (cached)
	tools/dev/gateway-venv

.PHONY: sglang-cpu-venv
sglang-cpu-venv: ## real SGLang 0.5.23 on CPU (its parser, resolver, bench client) in build/sglang-cpu/ (cached)
	tools/dev/sglang-cpu-venv

.PHONY: molecule
molecule: venv lab-rootfs wheelhouse ## every Molecule scenario on lab hosts (SCENARIOS="a b" to pick)
	tools/dev/molecule-run $(SCENARIOS)

.PHONY: mutation
mutation: venv ## mutation testing, each module against its own tests (MODULES="secrets yaml_text" to pick; not in `make test`)
	tools/dev/mutation $(MODULES)

.PHONY: lab-rootfs
lab-rootfs: ## build the cached lab root filesystem (once; again when its recipe changes)
	@tools/dev/system-packages lab
	$(LAB) rootfs

.PHONY: wheelhouse
wheelhouse: venv ## wheels that pip inside lab hosts installs from, offline
	tools/dev/wheelhouse

LAB_INVENTORY ?= inventory/lab
.PHONY: demo
demo: venv lab-rootfs wheelhouse ## the main job: boot the 4-host lab fleet, deploy SGLang (the stand-in), print each host's summary
	tools/lab/up-inventory $(LAB_INVENTORY) build/lab-inventory.json --wheelhouse build/wheelhouse
	ansible-playbook -i $(LAB_INVENTORY) -i build/lab-inventory.json deploy.yml

.PHONY: demo-rollout
demo-rollout: ## after `make demo`: roll a flag change out to the lab fleet, canary first (CHANGE='{"enable_torch_compile": true}')
	ansible-playbook -i $(LAB_INVENTORY) -i build/lab-inventory.json playbooks/rollout.yml \
		-e '{"sglang_server_extra_args": $(or $(CHANGE),{"enable_torch_compile": true})}'

.PHONY: demo-tune
demo-tune: ## after `make demo`: try candidate flags one at a time on lab1, keep only real gains (it prints where the report went)
	ansible-playbook -i $(LAB_INVENTORY) -i build/lab-inventory.json playbooks/tune.yml -e tune_host=lab1

.PHONY: bench
bench: venv lab-rootfs wheelhouse ## the speed figures the issues name, each printed as JSON
	python benchmarks/standin_capacity.py
	python benchmarks/probe_capacity.py
	python benchmarks/probe_accuracy.py
	python benchmarks/launch_verdict.py
	python benchmarks/rollout_scaling.py

.PHONY: lab-down
lab-down: ## halt and remove every lab host
	$(LAB) down

.PHONY: build
build: venv ## build the collection tarball into build/
	ansible-galaxy collection build --force --output-path build .

.PHONY: clean
clean: lab-down ## remove build outputs (keeps the cached lab root filesystem)
	find build -mindepth 1 -maxdepth 1 ! -name lab -exec rm -rf {} +
