# kiln - build, test, install. Every library comes through pkg-config.
#
#   make              build ./kiln
#   make deps         install missing Debian -dev packages (as root), or print the line
#   make quickstart   deps + build + the quickstart on the embedded sim provider
#   make test         sanitizer build (ASan+UBSan+LSan), check-clouds, unit and end-to-end tests
#   make check-clouds no cloud named in the engine, no provider hook called by a command
#                     (tests/check-cloud-names.py)
#   make check-command-ops  a command calls one operation, never a step of a run
#   make check-cast-qual  the build's -Wcast-qual catches a planted const-dropping cast
#   make check-names  every exported function's name leads to its file
#                     (tests/check-export-names.py; scripts/rename-exports.py renames)
#   make fuzz         libFuzzer on the spec loader (clang), FUZZ_SECONDS long
#   make fuzz-json    libFuzzer: kiln's JSON reader and writer against jansson's
#   make install      PREFIX=/usr/local: the binary, the man pages, the bash, zsh and
#                     fish completions, the spec's JSON Schema
#   make check-docs   every link of README.md, HACKING.md and docs/ resolves

PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= cc
CFLAGS   ?= -O2 -g
LDFLAGS  ?=
FUZZ_CC  ?= clang
FUZZ_SECONDS ?= 600
BUILD    ?= build
# Where the shells look for completions under PREFIX (bash-completion, zsh's
# site-functions, fish's vendor directory).
BASH_COMPLETION_DIR ?= $(PREFIX)/share/bash-completion/completions
ZSH_COMPLETION_DIR  ?= $(PREFIX)/share/zsh/site-functions
FISH_COMPLETION_DIR ?= $(PREFIX)/share/fish/vendor_completions.d

PKGS      := libcurl openssl jansson libgit2 yaml-0.1 libxml-2.0 zlib
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CMOCKA     = $(shell pkg-config --cflags --libs cmocka 2>/dev/null)

KILN_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wcast-qual \
	-Wno-missing-field-initializers -Isrc -Iproviders -MMD -MP
SAN_FLAGS   := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

SRCS      := $(wildcard src/*.c providers/*.c providers/*/*.c)
LIB_SRCS  := $(filter-out src/main.c src/cmd_%.c,$(SRCS))
# The templates of `kiln init`, compiled in: one generated C file (see
# scripts/embed-templates.sh), rebuilt when a template changes or one is added
# or removed (the directory's own time stamp).
TEMPLATES := $(sort $(wildcard templates/*.yaml))
GEN_TEMPLATES := $(BUILD)/gen/templates.c
REL_GEN_OBJ   := $(BUILD)/release/gen/templates.o
TEST_GEN_OBJ  := $(BUILD)/test/gen/templates.o
REL_OBJS  := $(SRCS:%.c=$(BUILD)/release/%.o) $(REL_GEN_OBJ)
TEST_OBJS := $(SRCS:%.c=$(BUILD)/test/%.o) $(TEST_GEN_OBJ)
TEST_LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/test/%.o) $(TEST_GEN_OBJ)
UNIT_SRCS := $(wildcard tests/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/%.c=$(BUILD)/test/bin/%)
MANPAGES  := $(wildcard man/*.1 man/*.5 man/*.7)
DEPS_STAMP := $(BUILD)/.deps-ok

.PHONY: all deps quickstart test check-clouds check-circles check-command-ops check-cast-qual check-names unit e2e fuzz fuzz-json install uninstall clean bench format check-docs

all: kiln

$(DEPS_STAMP): scripts/deps.sh
	@scripts/deps.sh --check
	@mkdir -p $(BUILD) && touch $@

deps:
	@scripts/deps.sh --install
	@mkdir -p $(BUILD) && touch $(DEPS_STAMP)

kiln: $(REL_OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(REL_OBJS) $(PKG_LIBS) -lpthread -lm

$(BUILD)/release/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(KILN_CFLAGS) $(CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(BUILD)/test/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(KILN_CFLAGS) -O1 -g $(SAN_FLAGS) $(PKG_CFLAGS) -c $< -o $@

$(GEN_TEMPLATES): scripts/embed-templates.sh $(TEMPLATES) templates
	scripts/embed-templates.sh $@ $(TEMPLATES)

$(REL_GEN_OBJ): $(GEN_TEMPLATES) src/template.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(KILN_CFLAGS) $(CFLAGS) -c $< -o $@

$(TEST_GEN_OBJ): $(GEN_TEMPLATES) src/template.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(KILN_CFLAGS) -O1 -g $(SAN_FLAGS) -c $< -o $@

$(BUILD)/test/kiln: $(TEST_OBJS)
	$(CC) $(SAN_FLAGS) -o $@ $(TEST_OBJS) $(PKG_LIBS) -lpthread -lm

$(BUILD)/test/bin/%: tests/%.c $(TEST_LIB_OBJS) tests/testutil.h
	@mkdir -p $(dir $@)
	$(CC) $(KILN_CFLAGS) -O1 -g $(SAN_FLAGS) $(PKG_CFLAGS) -Itests -o $@ $< $(TEST_LIB_OBJS) \
		$(CMOCKA) $(PKG_LIBS) -lpthread -lm

quickstart: deps kiln
	@scripts/quickstart.sh

# The emulator's own unit tests (tests/moto/test_*.py: EC2's throttling table) run beside them.
unit: $(UNIT_BINS)
	@status=0; scripts/run-unit.sh $(UNIT_BINS) || status=1; \
	python3 -m unittest discover -s tests/moto -p 'test_*.py' || status=1; exit $$status

e2e: $(BUILD)/test/kiln
	@tests/e2e/run.sh $(BUILD)/test/kiln

# The engine never names a cloud (DESIGN.md) and a command never calls a
# provider hook (HACKING.md): src/ is read for cloud names and service
# prefixes, cmd_*.c for hook calls, after a self-test shows planted ones are caught.
check-clouds:
	@python3 tests/check-cloud-names.py --self-test && python3 tests/check-cloud-names.py

# A command calls one operation and never sequences a run's steps (HACKING.md,
# the dependency rule): cmd_*.c is read for op_* steps and for a second
# NAME_op_run, after a self-test shows planted ones are caught.
check-command-ops:
	@python3 tests/check-command-ops.py --self-test && python3 tests/check-command-ops.py

# No module includes itself through others (HACKING.md, the dependency rule):
# circles outside the script's KNOWN list fail, and so does a listed one gone.
check-circles:
	@python3 tests/check-include-circles.py --self-test && python3 tests/check-include-circles.py

# No cast drops const (HACKING.md, "Const"): the whole tree, tests included,
# builds with -Wcast-qual -Werror (KILN_CFLAGS); jansson's non-const iterator
# and reference count are reached through src/jsonc.h, the one place const is
# dropped. This check shows the build's own flags still fail a planted cast.
CAST_QUAL_CC = $(CC) $(filter-out -MMD -MP,$(KILN_CFLAGS)) -fsyntax-only $(PKG_CFLAGS)
CAST_QUAL_PLANT = \#include <jansson.h>\nvoid f(const json_t *v);\nvoid f(const json_t *v) { json_decref((json_t *)v); }\n

# Exported functions are module_verb, so a name leads to its file (HACKING.md):
# names outside the script's KNOWN list fail, and so does a listed one gone.
# scripts/rename-exports.py holds the renames; run it over code merged with old names.
check-names:
	@python3 tests/check-export-names.py --self-test && python3 tests/check-export-names.py

check-cast-qual: | $(DEPS_STAMP)
	@if printf '$(CAST_QUAL_PLANT)' | $(CAST_QUAL_CC) -x c - 2>/dev/null; then \
		echo "check-cast-qual: a planted const-dropping cast was not caught" >&2; exit 1; fi

# Every check and both suites run even when one fails; the exit status is the worst.
test: $(UNIT_BINS) $(BUILD)/test/kiln
	@status=0; $(MAKE) --no-print-directory check-clouds || status=1; \
	$(MAKE) --no-print-directory check-circles || status=1; \
	$(MAKE) --no-print-directory check-command-ops || status=1; \
	$(MAKE) --no-print-directory check-cast-qual || status=1; \
	$(MAKE) --no-print-directory check-names || status=1; \
	scripts/run-unit.sh $(UNIT_BINS) || status=1; \
	python3 -m unittest discover -s tests/moto -p 'test_*.py' || status=1; \
	tests/e2e/run.sh $(BUILD)/test/kiln || status=1; exit $$status

$(BUILD)/fuzz/fuzz_spec: tests/fuzz/fuzz_spec.c $(LIB_SRCS) $(GEN_TEMPLATES) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -g -O1 -Isrc -Iproviders -fsanitize=fuzzer,address,undefined \
		$(PKG_CFLAGS) -o $@ tests/fuzz/fuzz_spec.c $(LIB_SRCS) $(GEN_TEMPLATES) $(PKG_LIBS) \
		-lpthread -lm

$(BUILD)/fuzz/fuzz_json: tests/fuzz/fuzz_json.c src/jsonr.c src/jsonw.c src/base.c src/util.c src/str.c src/strbuf.c \
		src/timefmt.c src/cidr.c src/log.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -g -O1 -Isrc -fsanitize=fuzzer,address,undefined \
		$(PKG_CFLAGS) -o $@ $^ $(PKG_LIBS) -lpthread -lm

fuzz: $(BUILD)/fuzz/fuzz_spec
	@mkdir -p $(BUILD)/fuzz/corpus
	$(BUILD)/fuzz/fuzz_spec -max_total_time=$(FUZZ_SECONDS) -max_len=16384 -timeout=10 \
		-dict=tests/fuzz/spec.dict -artifact_prefix=$(BUILD)/fuzz/ \
		$(BUILD)/fuzz/corpus tests/fuzz/seeds examples templates tests/specs/valid tests/specs/invalid

# Differential: kiln's JSON reader and writer (jsonr, jsonw) against jansson's.
fuzz-json: $(BUILD)/fuzz/fuzz_json
	@mkdir -p $(BUILD)/fuzz/json-corpus
	$(BUILD)/fuzz/fuzz_json -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=10 \
		-artifact_prefix=$(BUILD)/fuzz/json- $(BUILD)/fuzz/json-corpus tests/fuzz/json-seeds

check-docs:
	@scripts/check-docs.sh .

bench: kiln
	@bench/run.sh ./kiln

install: kiln
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/man/man7
	install -m 755 kiln $(DESTDIR)$(PREFIX)/bin/kiln
	for m in $(MANPAGES); do \
		s=$${m##*.}; install -m 644 $$m $(DESTDIR)$(PREFIX)/share/man/man$$s/; done
	install -d $(DESTDIR)$(BASH_COMPLETION_DIR) $(DESTDIR)$(ZSH_COMPLETION_DIR) \
		$(DESTDIR)$(FISH_COMPLETION_DIR)
	./kiln completion bash >$(DESTDIR)$(BASH_COMPLETION_DIR)/kiln
	./kiln completion zsh >$(DESTDIR)$(ZSH_COMPLETION_DIR)/_kiln
	./kiln completion fish >$(DESTDIR)$(FISH_COMPLETION_DIR)/kiln.fish
	install -d $(DESTDIR)$(PREFIX)/share/kiln
	./kiln schema >$(DESTDIR)$(PREFIX)/share/kiln/kiln.schema.json

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/kiln
	for m in $(MANPAGES); do s=$${m##*.}; rm -f $(DESTDIR)$(PREFIX)/share/man/man$$s/$${m##*/}; done
	rm -f $(DESTDIR)$(BASH_COMPLETION_DIR)/kiln $(DESTDIR)$(ZSH_COMPLETION_DIR)/_kiln \
		$(DESTDIR)$(FISH_COMPLETION_DIR)/kiln.fish $(DESTDIR)$(PREFIX)/share/kiln/kiln.schema.json

format:
	clang-format -i src/*.c src/*.h providers/*.[ch] providers/*/*.[ch] tests/*.c tests/*.h tests/fuzz/*.c

clean:
	rm -rf $(BUILD) kiln

-include $(REL_OBJS:.o=.d) $(TEST_OBJS:.o=.d)
