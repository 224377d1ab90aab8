# topoplace — build, test, benchmark, install.
#
#   make run      install what is missing, build, run the demo job
#   make check    install what is missing, build, run every test
#   make bench    benchmarks (prints tables)
#   make install  PREFIX=/usr/local DESTDIR=
#   make asan     unit and command tests under AddressSanitizer + UBSan
#   make valgrind unit tests under valgrind

PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
SPANKDIR ?= $(LIBDIR)/topoplace
DESTDIR ?=

BUILD   ?= build
CC      ?= cc
OPT     ?= -O2
CFLAGS  ?= $(OPT) -g
WARN     = -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CPPFLAGS_ALL = -Icore/include -D_GNU_SOURCE $(shell pkg-config --cflags json-c 2>/dev/null) $(CPPFLAGS)
CFLAGS_ALL   = $(WARN) -fPIC -pthread $(CFLAGS) $(EXTRA_CFLAGS)
LIBS    = $(shell pkg-config --libs json-c 2>/dev/null || echo -ljson-c) -lslurm -lhwloc -lmetis -lm -lpthread
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm)

VERSION = 0.1.0
SONAME  = libtopoplace.so.0

CORE_SRC  = $(sort $(wildcard core/src/*.c))
CORE_OBJ  = $(CORE_SRC:core/src/%.c=$(BUILD)/core/%.o)
CLI_SRC   = $(sort $(wildcard plugin/cli*.c))
CLI_OBJ   = $(CLI_SRC:plugin/%.c=$(BUILD)/plugin/%.o)
SPANK_SRC = $(sort $(wildcard plugin/spank*.c))
SPANK_OBJ = $(SPANK_SRC:plugin/%.c=$(BUILD)/plugin/%.o)
UNIT_SRC  = $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN  = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_SRC = $(sort $(wildcard tests/bench/*.c))
BENCH_BIN = $(BENCH_SRC:tests/bench/%.c=$(BUILD)/bench/%)

LIB_A  = $(BUILD)/libtopoplace.a
LIB_SO = $(BUILD)/libtopoplace.so
CLI    = $(BUILD)/topoplace
SPANK  = $(if $(SPANK_SRC),$(BUILD)/topoplace.so)

.PHONY: all deps run check unit cli-tests slurm-tests install-tests bench install uninstall \
        asan valgrind clean slurm-demo deps-bench

all: $(LIB_A) $(LIB_SO) $(CLI) $(SPANK) $(BUILD)/topoplace.pc

$(BUILD)/core/%.o: core/src/%.c core/src/internal.h $(wildcard core/include/topoplace/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/plugin/%.o: plugin/%.c $(wildcard plugin/*.h) $(wildcard core/include/topoplace/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -Iplugin $(CFLAGS_ALL) -c $< -o $@

$(LIB_A): $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LIB_SO): $(CORE_OBJ)
	$(CC) -shared -Wl,-soname,$(SONAME) -o $@ $^ $(LIBS) $(LDFLAGS)

$(CLI): $(CLI_OBJ) $(LIB_A)
	$(CC) $(CFLAGS_ALL) -o $@ $(CLI_OBJ) $(LIB_A) $(LIBS) $(LDFLAGS)

# The SPANK plugin carries the core statically so that slurmstepd needs no
# extra library path; only Slurm's public spank.h is used.
$(BUILD)/topoplace.so: $(SPANK_OBJ) $(CORE_OBJ)
	$(CC) -shared -o $@ $(SPANK_OBJ) $(CORE_OBJ) $(LIBS) $(LDFLAGS)

$(BUILD)/tests/%: tests/unit/%.c tests/unit/testutil.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -Icore/src -Itests/unit $(CFLAGS_ALL) -Wno-missing-prototypes -Wno-format-truncation \
	  -DTP_TEST_DATA='"$(CURDIR)/tests/data"' -DTP_SOURCE_DIR='"$(CURDIR)"' \
	  -o $@ $< $(LIB_A) $(CHECK_LIBS) $(LIBS)

$(BUILD)/bench/%: tests/bench/%.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -Icore/src $(CFLAGS_ALL) -Wno-missing-prototypes -o $@ $< $(LIB_A) $(LIBS)

$(BUILD)/topoplace.pc: contrib/topoplace.pc.in Makefile
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	    -e 's|@INCDIR@|$(INCDIR)|g' -e 's|@VERSION@|$(VERSION)|g' $< > $@

deps:
	@sh contrib/install-deps.sh

deps-bench:
	@sh contrib/install-deps.sh bench

run: deps
	$(MAKE) all
	sh tests/cli/demo.sh $(CLI)

unit: $(UNIT_BIN)
	@sh tests/run-unit.sh $(UNIT_BIN)

cli-tests: $(CLI)
	@sh tests/cli/run.sh $(CLI)

slurm-tests: all
	@if [ -x tests/slurm/run.sh ]; then BUILD=$(BUILD) sh tests/slurm/run.sh; fi

check: deps
	$(MAKE) all
	$(MAKE) unit
	$(MAKE) cli-tests
	$(MAKE) slurm-tests
	$(MAKE) install-tests

install-tests: all
	@sh tests/install.sh $(BUILD)

slurm-demo: deps
	$(MAKE) all
	BUILD=$(BUILD) sh tests/slurm/demo.sh

# Benchmarks build in their own directory so that -O3 is really used.
bench: deps deps-bench
	$(MAKE) BUILD=build-bench OPT=-O3 all $(BENCH_BIN:$(BUILD)/%=build-bench/%)
	BUILD=build-bench sh tests/bench/run.sh

asan:
	$(MAKE) BUILD=build-asan OPT=-O1 EXTRA_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	  LDFLAGS="-fsanitize=address,undefined" unit cli-tests

valgrind: $(UNIT_BIN)
	@sh tests/run-unit.sh --valgrind $(UNIT_BIN)

install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR)/topoplace $(DESTDIR)$(BINDIR) \
	  $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(MANDIR)/man1
	install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/libtopoplace.so.$(VERSION)
	ln -sf libtopoplace.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libtopoplace.so
	install -m 644 core/include/topoplace/*.h $(DESTDIR)$(INCDIR)/topoplace/
	install -m 755 $(CLI) $(DESTDIR)$(BINDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	    -e 's|@INCDIR@|$(INCDIR)|g' -e 's|@VERSION@|$(VERSION)|g' \
	    contrib/topoplace.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/topoplace.pc
	install -m 644 doc/topoplace.1 $(DESTDIR)$(MANDIR)/man1/
	if [ -n "$(SPANK)" ]; then install -d $(DESTDIR)$(SPANKDIR) && \
	  install -m 755 $(SPANK) $(DESTDIR)$(SPANKDIR)/; fi

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libtopoplace.* $(DESTDIR)$(BINDIR)/topoplace \
	  $(DESTDIR)$(LIBDIR)/pkgconfig/topoplace.pc $(DESTDIR)$(MANDIR)/man1/topoplace.1 \
	  $(DESTDIR)$(SPANKDIR)/topoplace.so
	rm -rf $(DESTDIR)$(INCDIR)/topoplace

clean:
	rm -rf build build-asan build-bench
