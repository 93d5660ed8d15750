# tenantgate - the two commands a newcomer needs:
#   make demo   real local provider + consumer clusters, webhook and signer, one authentication
#   make test   every test: unit (normal and ASan+UBSan builds), CLI, a gcc Release compile,
#               fuzz (bounded), e2e, then the Liqo node suite (as root: see test below)
# Both install what they need first (Debian packages, the pinned Kubernetes binaries).
SHELL := /bin/bash
JOBS  ?= $(shell nproc)
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
RELEASE_BUILD ?= build-release
TYPES_BUILD ?= build-types
BUILD_TYPES := Debug RelWithDebInfo Release MinSizeRel
# A smoke run per target in CI (14 targets, JOBS at once); FUZZ_SECONDS=600 fuzzes deeper.
FUZZ_SECONDS ?= 15
VERSION := $(shell sed -n 's/^\#define TG_VERSION "\(.*\)"$$/\1/p' cli/cli.h)

# Debian packages the build, the tests and the demo use.
DEB_PACKAGES := build-essential cmake ninja-build pkg-config git ca-certificates curl openssl \
  libh2o-dev libuv1-dev libssl-dev libcurl4-openssl-dev libjson-c-dev libyaml-dev libcmocka-dev libsodium-dev \
  clang libclang-rt-14-dev python3 python3-venv python3-cryptography wrk nghttp2-client util-linux valgrind

# `make images` (and so `make test`, whose node suite installs the chart from the images).
IMAGE_PACKAGES := buildah
# And these only `make test-node`: the test bed's node (runc, CNI plugins, ip, nsenter).
NODE_PACKAGES := $(IMAGE_PACKAGES) runc containernetworking-plugins iproute2 util-linux curl

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps image-deps node-deps node-preflight images node-bin test-node test-liqo-node build build-asan build-fuzz build-release build-types test unit unit-asan fuzz k8s-bin helm-bin liqo-bin e2e test-liqo demo demo-down bench clean test-storm

all: build

# Idempotent: installs only what is missing, without prompts.
deps:
	@$(call install_debs,$(DEB_PACKAGES))

image-deps:
	@$(call install_debs,$(IMAGE_PACKAGES))

node-deps:
	@$(call install_debs,$(NODE_PACKAGES))

define install_debs
	missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing$$missing"; \
	  $(SUDO) apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q --no-install-recommends $$missing; \
	else echo "deps: Debian packages present"; fi
endef

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo

$(ASAN_BUILD)/build.ninja:
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTG_SANITIZE=ON

$(FUZZ_BUILD)/build.ninja:
	CC=clang cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTG_FUZZ=ON

# gcc's -O3 sees paths -O2 does not (maybe-uninitialized): make test compiles Release too.
$(RELEASE_BUILD)/build.ninja:
	CC=gcc cmake -S . -B $(RELEASE_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

build-asan: deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)

build-fuzz: deps $(FUZZ_BUILD)/build.ninja
	cmake --build $(FUZZ_BUILD) -j $(JOBS)

build-release: deps $(RELEASE_BUILD)/build.ninja
	cmake --build $(RELEASE_BUILD) -j $(JOBS)

# Every CMake build type with gcc and clang (eight build folders under $(TYPES_BUILD)/),
# compile only: -Werror makes each one a check that no optimiser level warns.
# Goes on past a failure and names every one that failed.
build-types: deps
	@failed=""; for cc in gcc clang; do for t in $(BUILD_TYPES); do \
	  d=$(TYPES_BUILD)/$$cc-$$t; echo "build-types: $$cc $$t in $$d"; \
	  { CC=$$cc cmake -S . -B $$d -G Ninja -DCMAKE_BUILD_TYPE=$$t >/dev/null && \
	    cmake --build $$d -j $(JOBS); } || failed="$$failed $$cc-$$t"; \
	done; done; \
	if [ -n "$$failed" ]; then echo "build-types: FAILED:$$failed"; exit 1; fi; \
	echo "build-types: all $(words $(BUILD_TYPES)) build types compile with gcc and with clang (8 builds)"

# -j: the unit tests two at a time; the two timing-sensitive server tests are RUN_SERIAL.
unit: build helm-bin
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L 'unit|cli'

unit-asan: build-asan helm-bin
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS) -L 'unit|cli'

# Each target is one single-threaded libFuzzer process for FUZZ_SECONDS: run JOBS at once, each
# on a core of its own, so every target still fuzzes as long as alone.
fuzz: build-fuzz
	cd $(FUZZ_BUILD) && TG_FUZZ_SECONDS=$(FUZZ_SECONDS) ctest --output-on-failure -j $(JOBS) -L fuzz

# The pinned kube-apiserver, kube-controller-manager, kubectl and etcd (e2e/k8s/go.mod), built
# once through the Go module proxy into ${TG_CACHE_DIR:-~/.cache/tenantgate}; warm: a no-op.
k8s-bin: deps
	@e2e/k8s-bin >/dev/null

# The Helm CLI (helm.sh/helm/v4, pinned in e2e/helm/go.mod), built once the same way; the
# chart's golden test (ctest test_chart) and e2e/test_helm.py use it; warm: a no-op.
helm-bin: deps
	@e2e/helm-bin >/dev/null && e2e/helm-bin --crds >/dev/null

# liqoctl and liqocheck from the pinned Liqo releases (e2e/liqo/go*.mod), and Liqo's own
# controller-manager, crd-replicator, webhook and virtual-kubelet from the newest, built once
# the same way into ${TG_CACHE_DIR:-~/.cache/tenantgate}; warm: a no-op.
liqo-bin:
	@e2e/liqo-bin >/dev/null

# Real control planes on 127.0.0.1 (e2e/cluster), tests in e2e/test_*.py (pytest); the Liqo
# compatibility suite (label liqo) is part of it.
e2e: build k8s-bin helm-bin liqo-bin
	cd $(BUILD) && ctest --output-on-failure -L '^e2e$$'

# The Liqo compatibility suite alone (ctest e2e-liqo; test_liqo_node.py is test-liqo-node).
test-liqo: build k8s-bin liqo-bin
	cd $(BUILD) && ctest --output-on-failure -L '^liqo$$'

# The fault storm during onboarding (e2e/test_fault_storm.py); not part of `make test`.
# TG_STORM_SEED=N replays a schedule, TG_STORM_CONSUMERS=N scales it (default 200).
test-storm: build k8s-bin
	cd $(BUILD) && ctest -V -L '^e2e-slow$$'

# A provider and a consumer cluster left running; demo/env says how to reach them.
demo: build k8s-bin
	TG_BUILD_DIR=$(abspath $(BUILD)) e2e/demo up

demo-down:
	e2e/demo down

# The node suite (test-liqo-node: Liqo on the node, then the chart from `make images`) last,
# after e2e: it needs root and the kernel features
# the node uses (network namespaces, cgroups, overlay mounts); node-preflight names in one line
# what is missing before node-bin builds anything. Run as another user, every other suite has
# run as before (only apt-get goes through $(SUDO)) and this one then fails on that line.
test: unit unit-asan build-release fuzz e2e node-preflight node-bin images
	@e2e/node/preflight
	cd $(BUILD) && ctest --output-on-failure -L '^e2e-liqo-node$$'

# Root and the kernel features of the test bed's node (e2e/node/preflight --kernel).
node-preflight: deps
	@e2e/node/preflight --kernel

# OCI images FROM scratch (images/build), each checked by running it (images/check);
# oci-archive tarballs in $(BUILD)/images/. The certs image takes the pinned kubectl.
images: build image-deps k8s-bin
	images/build --build $(BUILD)
	images/check $(BUILD)/images/*-$(VERSION).oci.tar

# kubelet, kube-scheduler, containerd and the pause image for e2e/cluster up NAME --node,
# built once into ~/.cache/tenantgate (e2e/node-bin).
node-bin: node-deps k8s-bin
	@e2e/node-bin >/dev/null

# The shipped manifests, from the images, on a real node (e2e/test_deploy.py).
test-node: images node-bin
	cd $(BUILD) && ctest --output-on-failure -L '^e2e-node$$'

# The node suite alone (make test runs it too): replace mode down to a Ready virtual node and
# a pod Running on a real node (e2e/test_liqo_node.py), then the chart from the images on it
# (e2e/test_helm_node.py); needs root, like test-node.
test-liqo-node: build node-preflight node-bin liqo-bin images
	@e2e/node/preflight
	cd $(BUILD) && ctest --output-on-failure -L '^e2e-liqo-node$$'

bench: build
	@for b in bench/*; do [ -x "$$b" ] && [ -f "$$b" ] && "$$b" $(BUILD); done

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(RELEASE_BUILD) $(TYPES_BUILD)
