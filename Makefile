# xmrgate build. `make` builds both daemons; `make test` is the whole suite.
# SANITIZE=1 builds everything with ASan+UBSan into build/asan (see `make asan`);
# SANITIZE=fuzz builds it with clang, ASan+UBSan and libFuzzer's coverage into build/fuzz
# (see `make fuzz`).

CC       ?= cc
PKGS     := libmicrohttpd gnutls libcurl jansson libpq openssl inih liburcu-bp liburcu-cds libqrencode libzmq
SANITIZE ?= 0

ASANFLAGS  := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined \
              -fsanitize-recover=alignment
FUZZ_BUILD := build/fuzz
ifeq ($(SANITIZE),1)
  BUILD    ?= build/asan
  SANFLAGS := $(ASANFLAGS)
  OPT      := -O1
else ifeq ($(SANITIZE),fuzz)
  CC       := clang
  BUILD    ?= $(FUZZ_BUILD)
  SANFLAGS := $(ASANFLAGS) -fsanitize=fuzzer-no-link
  OPT      := -O1
  # clang's -Wformat=2 also flags the va_list formatters (xg_log.c, xg_httpd.c), gcc's not.
  WARN_CC  := -Wno-format-nonliteral
else
  BUILD    ?= build/release
  SANFLAGS :=
  OPT      := -O2
  # Release hardening, checked on the built binaries by `make hardening-check`: checked
  # buffer and format functions (glibc's _FORTIFY_SOURCE, which needs -O1 or more), stack
  # canaries, a position-independent executable, and the relocations read-only after load
  # (full RELRO: relro + now). The sanitizer builds leave them out (ASan replaces the
  # functions that fortify checks and does the canaries' job itself).
  HARDEN_CPP := -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2
  HARDEN_CC  := -fstack-protector-strong -fstack-clash-protection -fPIE
  HARDEN_LD  := -pie -Wl,-z,relro,-z,now
endif
BIN := $(if $(filter 1 fuzz,$(SANITIZE)),$(BUILD)/bin,bin)
# The builds `make test` runs (release, ASan, fuzz, analyzer) compile in parallel on every
# core; the tests themselves run one after another.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

# The library flags come from pkg-config, read once when make starts. `make run` and
# `make test` install the packages first (deps) and then build in a second make, which
# reads them afresh. A build goal on a machine without them stops here with one line.
NO_BUILD_GOALS := deps run test stop clean format format-check deb deb-test
ifneq ($(shell pkg-config --exists $(PKGS) 2>/dev/null || echo missing),)
  ifneq ($(filter-out $(NO_BUILD_GOALS),$(or $(MAKECMDGOALS),all)),)
    $(error the libraries to build with are not installed: run 'make run' (as root: installs them, \
builds, starts the stack) or 'make deps')
  endif
endif

WARN     := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wstrict-prototypes \
            -Wmissing-prototypes -Wvla -Wno-unused-parameter $(WARN_CC)
CPPFLAGS := -D_GNU_SOURCE $(HARDEN_CPP) -Icommon -Igateway -Ibilling -I$(BUILD)/gen
CFLAGS   := -std=c11 $(OPT) -g $(WARN) $(SANFLAGS) $(HARDEN_CC) \
            $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread -lm
LDFLAGS  := $(SANFLAGS) $(HARDEN_LD)

# The release (one source: the VERSION file) and the commit it is built from ("unknown"
# outside a git checkout, e.g. a release tarball). They reach the binaries through one
# generated header, rewritten only when either changes (common/xg_version.c), and the shell
# tools through their XG_VERSION line.
XG_VERSION := $(shell cat VERSION)
ifeq ($(origin XG_COMMIT),undefined)
  XG_COMMIT := $(or $(shell git rev-parse --short=12 HEAD 2>/dev/null),unknown)
endif

COMMON_SRC  := $(wildcard common/*.c)
GATEWAY_SRC := $(filter-out gateway/main.c,$(wildcard gateway/*.c gateway/*/*.c))
BILLING_SRC := $(filter-out billing/main.c,$(wildcard billing/*/*.c))
SQL_FILES   := $(sort $(wildcard sql/*.sql))
UNIT_SRC    := $(wildcard tests/unit/*/test_*.c tests/unit/*/*/test_*.c)

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))
COMMON_OBJ  := $(call obj,$(COMMON_SRC)) $(BUILD)/gen/sql_embedded.o
GATEWAY_OBJ := $(call obj,$(GATEWAY_SRC))
BILLING_OBJ := $(call obj,$(BILLING_SRC))
UNIT_BIN    := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))

.PHONY: all deps run stop test unit asan integration e2e drill-backup deb deb-test \
        drill-patroni drill-fleet drill-regions drill-flood drill-upgrade format format-check \
        docs docs-check test-tools observability-check fuzz fuzz-drivers fuzz-run fuzz-smoke \
        bench clean lint scan hardening-check FORCE
all: $(BIN)/xmrgate-gateway $(BIN)/xmrgate-billing $(BIN)/xmrgate-admin $(BIN)/xmr402-agent

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# SQL stays SQL: every file in sql/ is compiled into the binaries as a string.
$(BUILD)/tools/embed: tools/embed.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror $< -o $@
$(BUILD)/gen/sql_embedded.c: $(BUILD)/tools/embed $(SQL_FILES)
	@mkdir -p $(dir $@)
	$(BUILD)/tools/embed $@ $(SQL_FILES)
$(BUILD)/gen/sql_embedded.o: $(BUILD)/gen/sql_embedded.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/gen/xg_build_id.h: FORCE
	@mkdir -p $(dir $@)
	@printf '#define XG_VERSION "%s"\n#define XG_COMMIT "%s"\n' '$(XG_VERSION)' '$(XG_COMMIT)' >$@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(BUILD)/common/xg_version.o: $(BUILD)/gen/xg_build_id.h
FORCE:

$(BUILD)/libxgcommon.a: $(COMMON_OBJ)
	rm -f $@ && $(AR) rcs $@ $^
$(BUILD)/libxggateway.a: $(GATEWAY_OBJ)
	rm -f $@ && $(AR) rcs $@ $^
$(BUILD)/libxgbilling.a: $(BILLING_OBJ)
	rm -f $@ && $(AR) rcs $@ $^

$(BIN)/xmrgate-gateway: $(BUILD)/gateway/main.o $(BUILD)/libxggateway.a $(BUILD)/libxgcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
$(BIN)/xmrgate-billing: $(BUILD)/billing/main.o $(BUILD)/libxgbilling.a $(BUILD)/libxgcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
# The shell tools get the release on their XG_VERSION line.
$(BIN)/xmrgate-admin $(BIN)/xmr402-agent: $(BIN)/%: tools/% $(BUILD)/gen/xg_build_id.h
	@mkdir -p $(dir $@)
	sed 's/^XG_VERSION=.*/XG_VERSION="$(XG_VERSION) (commit $(XG_COMMIT))"/' $< >$@.tmp
	chmod 755 $@.tmp && mv $@.tmp $@

# Unit tests link against the three static libraries; a test may also #include the .c
# under test to reach its statics.
$(BUILD)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(BUILD)/libxggateway.a \
                  $(BUILD)/libxgbilling.a $(BUILD)/libxgcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itests/unit $< $(BUILD)/libxggateway.a $(BUILD)/libxgbilling.a \
	    $(BUILD)/libxgcommon.a $(LDFLAGS) $(LDLIBS) -lcmocka -o $@

# Helpers the integration tests run (stand-ins and load tools, never the proof).
TEST_TOOLS := $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/%,$(wildcard tests/tools/*.c))
$(BUILD)/tests/tools/%: tests/tools/%.c tests/tools/stand_in.h $(BUILD)/libxggateway.a \
    $(BUILD)/libxgcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $< $(BUILD)/libxggateway.a $(BUILD)/libxgcommon.a \
	    $(LDFLAGS) $(LDLIBS) -o $@
test-tools: $(TEST_TOOLS)

unit: all $(UNIT_BIN)
	@tests/run-unit.sh $(UNIT_BIN)

# UBSan halts on every finding except the suppressed ones (tests/ubsan.supp: liburcu's own).
asan:
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions=$(CURDIR)/tests/ubsan.supp \
	    $(MAKE) -j$(JOBS) SANITIZE=1 unit

# libFuzzer drivers (tests/fuzz/README.md), built with SANITIZE=fuzz into build/fuzz/drivers.
# fuzz-smoke runs each briefly over its corpus and its regression inputs; fuzz-run runs each
# for FUZZ_RUNS executions.
FUZZ_SRC     := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_DRIVERS := $(patsubst tests/fuzz/%.c,$(FUZZ_BUILD)/drivers/%,$(FUZZ_SRC))
FUZZ_RUNS    ?= 10000000
fuzz:
	$(MAKE) -j$(JOBS) SANITIZE=fuzz fuzz-drivers
ifeq ($(SANITIZE),fuzz)
fuzz-drivers: $(FUZZ_DRIVERS)
$(BUILD)/drivers/%: tests/fuzz/%.c $(wildcard tests/fuzz/*.h) $(BUILD)/libxggateway.a \
                    $(BUILD)/libxgbilling.a $(BUILD)/libxgcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itests/fuzz $< $(BUILD)/libxggateway.a $(BUILD)/libxgbilling.a \
	    $(BUILD)/libxgcommon.a $(LDFLAGS) -fsanitize=fuzzer $(LDLIBS) -o $@
else
fuzz-drivers: fuzz
endif
fuzz-run: fuzz
	tests/fuzz/run.sh run $(FUZZ_RUNS) $(FUZZ_DRIVERS)
fuzz-smoke: fuzz
	tests/fuzz/run.sh smoke 0 $(FUZZ_DRIVERS)

integration: all test-tools
	tests/run-integration.sh

e2e: all test-tools
	tests/e2e/run.sh

# Debian packages of the committed tree (scripts/deb.sh): xmrgate-gateway, xmrgate-billing and
# xmrgate-admin, built by dpkg-buildpackage into build/deb/. deb-test installs them in a fresh
# Debian 12 root and runs each daemon as its unit says (tests/deb/run.sh; a few minutes).
deb:
	scripts/deb.sh
deb-test: deb
	tests/deb/run.sh

# The backup drill alone (docs/OPERATIONS.md): a stack of its own, pgBackRest, a full
# backup, payments, the cluster destroyed and restored twice. Also part of `make integration`.
drill-backup: all test-tools
	tests/run-integration.sh test_ops_backup

# The multi-machine drills that stay out of `make test` (slow; docs/DEPLOYMENT.md). The
# Patroni drill is an integration test (test_db_patroni.sh): `make test` runs it, and
# `make drill-patroni` alone.
drill-patroni: all test-tools
	tests/run-integration.sh test_db_patroni
drill-fleet: all test-tools
	XG_TEST_DIR=$(CURDIR)/tests/drills tests/run-integration.sh test_fleet
drill-regions: all test-tools
	XG_TEST_DIR=$(CURDIR)/tests/drills tests/run-integration.sh test_regions
drill-flood: all test-tools
	XG_TEST_DIR=$(CURDIR)/tests/drills tests/run-integration.sh test_flood
# The rolling upgrade from XG_UPGRADE_FROM (a tag or commit; docs/OPERATIONS.md).
drill-upgrade: all test-tools
	XG_TEST_DIR=$(CURDIR)/tests/drills tests/run-integration.sh test_upgrade

# The README's two commands.
deps:
	scripts/deps.sh
run: deps
	$(MAKE) all test-tools
	scripts/stack.sh run
stop:
	scripts/stack.sh stop
test: deps
	$(MAKE) -j$(JOBS) all test-tools
	$(MAKE) format-check lint scan docs-check observability-check hardening-check
	$(MAKE) unit
	$(MAKE) asan
	$(MAKE) fuzz-smoke
	$(MAKE) integration
	$(MAKE) e2e

bench: all
	tests/bench/run.sh

format:
	clang-format -i $(shell git ls-files '*.c' '*.h')
format-check:
	clang-format --dry-run --Werror $(shell git ls-files '*.c' '*.h')

# docs/methods.md is generated from the method table (gateway/rpc/methods.c).
$(BUILD)/tools/gen-methods-doc: tools/gen_methods_doc.c $(BUILD)/libxggateway.a $(BUILD)/libxgcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $^ $(LDFLAGS) $(LDLIBS) -o $@
# Every metric family the daemons register (scripts/check-observability.sh).
$(BUILD)/tools/metric-names: tools/metric_names.c $(BUILD)/libxggateway.a $(BUILD)/libxgbilling.a \
    $(BUILD)/libxgcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $^ $(LDFLAGS) $(LDLIBS) -o $@
observability-check: $(BUILD)/tools/metric-names
	scripts/check-observability.sh $(BUILD)/tools/metric-names
# The README's configuration reference is generated from the daemons' key tables.
docs: $(BUILD)/tools/gen-methods-doc all
	$(BUILD)/tools/gen-methods-doc > docs/methods.md
	tools/readme-config.sh $(BIN) > README.md.tmp && mv README.md.tmp README.md
docs-check: $(BUILD)/tools/gen-methods-doc all
	@$(BUILD)/tools/gen-methods-doc | diff -u docs/methods.md - \
	    || { echo "docs/methods.md is stale: run 'make docs'"; exit 1; }
	@tools/readme-config.sh $(BIN) | diff -u README.md - \
	    || { echo "README.md's configuration reference is stale: run 'make docs'"; exit 1; }

# cppcheck reads no system header: tools/cppcheck/jansson.cfg gives it jansson's iteration
# macros, so the loops written with them are analysed too. The structure lint reads the call
# ties from the object files (nm): it builds them first.
lint: all
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
	    --library=tools/cppcheck/jansson.cfg --suppress=missingIncludeSystem \
	    -Icommon -Igateway -Ibilling common gateway billing
	tools/structure_lint.py --objects $(BUILD) common gateway billing

# clang's static analyzer over every C file of the daemons, the tools and the test tools,
# built afresh into build/scan (scan-build reports only what it sees compiled); any report
# fails. Reports inside liburcu's headers are its inline fast paths, which the analyzer
# cannot follow (a thread's reader slot set by urcu_bp_register, pointers through asm):
# those are dropped, ours never are. HTML reports land in build/scan/report.
SCAN_BUILD ?= scan-build-14
SCAN_DIR   := build/scan
scan:
	rm -rf $(SCAN_DIR)
	$(SCAN_BUILD) --status-bugs -o $(SCAN_DIR)/report --exclude '^/usr/include/.*urcu' \
	    $(MAKE) -j$(JOBS) BUILD=$(SCAN_DIR) BIN=$(SCAN_DIR)/bin all test-tools \
	    $(SCAN_DIR)/tools/gen-methods-doc $(SCAN_DIR)/tools/metric-names

# The release binaries carry the hardening above (scripts/check-hardening.sh).
hardening-check: all
	@test "$(SANITIZE)" = 0 || { echo "hardening-check checks the release build (SANITIZE=0)"; exit 2; }
	scripts/check-hardening.sh $(BIN)

clean:
	rm -rf build bin

# (build/deb-test holds a whole Debian root while make deb-test runs: not ours to read)
-include $(shell find build -path build/deb-test -prune -o -name '*.d' -type f -print 2>/dev/null)
