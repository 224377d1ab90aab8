# topoplace — build, test, benchmark, install.
#
#   make run      install what is missing, build, run the demo job
#   make check    install what is missing, build, run every test
#   make doc-tests  the man pages name every option and key; they format cleanly
#   make bench    benchmarks (prints tables)
#   make install  PREFIX=/usr/local DESTDIR=
#   make asan     unit and command tests under AddressSanitizer + UBSan
#   make valgrind unit tests under valgrind
#   make fuzz     every libFuzzer target for FUZZ_SECONDS (default 60) each
#   make fuzz-smoke  a few seconds each and every regression input (in check)
#
# DEVELOPER=1 turns warnings into errors (CI sets it); distribution builds
# with a newer compiler are not broken by a new warning.

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
DEVELOPER ?=
WARN     = -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           $(if $(DEVELOPER),-Werror)
# Hardening: the plugin runs inside slurmstepd (root).
HARDEN_CPP = $(if $(findstring -O0,$(OPT)),,-D_FORTIFY_SOURCE=2)
HARDEN_C   = -fstack-protector-strong
HARDEN_LD  = -Wl,-z,relro,-z,now
CPPFLAGS_ALL = -Icore/include -D_GNU_SOURCE $(HARDEN_CPP) \
               $(shell pkg-config --cflags json-c 2>/dev/null) $(CPPFLAGS)
CFLAGS_ALL   = $(WARN) -fPIC -pthread $(HARDEN_C) $(CFLAGS) $(EXTRA_CFLAGS)
DEPFLAGS     = -MMD -MP
LIBS    = $(shell pkg-config --libs json-c 2>/dev/null || echo -ljson-c) -lhwloc -lmetis -lm -lpthread
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm)

VERSION = $(shell sed -n 's/^\#define TOPOPLACE_VERSION "\(.*\)"/\1/p' core/include/topoplace/version.h)
SONAME  = libtopoplace.so.0

# ---- sources (listed: a stray file in a folder does not enter the build)

CORE_SRC = $(addprefix core/src/, \
	alloc.c \
	conf.c \
	dragonfly.c \
	geom.c \
	geom_fold.c \
	geom_search.c \
	geom_select.c \
	gpu_matrix.c \
	gpusel.c \
	graph.c \
	graphmap.c \
	hashtab.c \
	hiermap.c \
	hostfile.c \
	hostlist.c \
	job.c \
	job_map.c \
	job_node.c \
	json_graph.c \
	machine.c \
	metrics.c \
	modcolor.c \
	node.c \
	node_links.c \
	node_xml.c \
	place.c \
	stencil.c \
	torus.c \
	tree.c \
	util.c \
	version.c \
)
CLI_SRC = $(addprefix plugin/cli/, \
	check_config.c \
	diag.c \
	eval.c \
	main.c \
	map.c \
	map_output.c \
	node_info.c \
	output.c \
)
SPANK_SRC = $(addprefix plugin/spank/, \
	batch.c \
	dispatch.c \
	hints.c \
	lists.c \
	place.c \
	site.c \
	srun.c \
	srun_args.c \
	task.c \
	userfile.c \
)
UNIT_SRC = $(addprefix tests/unit/, \
	test_conf.c \
	test_dragonfly.c \
	test_geom.c \
	test_gpusel.c \
	test_graphmap.c \
	test_input.c \
	test_job.c \
	test_machine.c \
	test_metrics.c \
	test_network.c \
	test_node.c \
	test_pattern.c \
	test_place.c \
	test_plugin.c \
	test_tree.c \
)
BENCH_SRC = $(addprefix tests/bench/, \
	bench_geom.c \
	bench_gpu.c \
	bench_graph.c \
	bench_input.c \
	bench_peers.c \
	bench_scale.c \
)
FUZZ_TARGETS = \
	conf \
	coordfile \
	gpu_links \
	gpu_matrix \
	hostfile \
	hostlist \
	json_graph \
	node_xml \
	stencil \
	topology \


CORE_OBJ  = $(CORE_SRC:core/src/%.c=$(BUILD)/core/%.o)
CLI_OBJ   = $(CLI_SRC:plugin/%.c=$(BUILD)/plugin/%.o)
SPANK_OBJ = $(SPANK_SRC:plugin/%.c=$(BUILD)/plugin/%.o)
UNIT_BIN  = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_BIN = $(BENCH_SRC:tests/bench/%.c=$(BUILD)/bench/%)
FUZZ_BIN  = $(FUZZ_TARGETS:%=$(BUILD)/fuzz/fuzz_%)

# Fuzzing: clang's libFuzzer with ASan and UBSan, in a build of its own.
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 4
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined \
           -fno-omit-frame-pointer

LIB_A  = $(BUILD)/libtopoplace.a
LIB_SO = $(BUILD)/libtopoplace.so
CLI    = $(BUILD)/topoplace
SPANK  = $(BUILD)/topoplace.so

.PHONY: all deps run check unit cli-tests slurm-tests install-tests doc-tests bench install \
        uninstall asan valgrind clean slurm-demo deps-bench deps-doc deps-fuzz fuzz fuzz-smoke \
        fuzz-build fuzz-bins zoltan2-map

all: $(LIB_A) $(LIB_SO) $(CLI) $(SPANK) $(BUILD)/topoplace.pc

# The core keeps everything but its TP_EXPORT API hidden in the shared
# library (core/include/topoplace/export.h).
$(BUILD)/core/%.o: core/src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -fvisibility=hidden $(DEPFLAGS) -c $< -o $@

$(BUILD)/plugin/%.o: plugin/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -I$(dir $<) $(CFLAGS_ALL) $(DEPFLAGS) -c $< -o $@

$(LIB_A): $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LIB_SO): $(CORE_OBJ)
	$(CC) -shared -Wl,-soname,$(SONAME) $(HARDEN_LD) -o $@ $^ $(LIBS) $(LDFLAGS)

$(CLI): $(CLI_OBJ) $(LIB_A)
	$(CC) $(CFLAGS_ALL) $(HARDEN_LD) -o $@ $(CLI_OBJ) $(LIB_A) $(LIBS) $(LDFLAGS)

# The SPANK plugin carries the core statically, so that slurmstepd needs no
# extra library path, and exports only what Slurm looks up (version script).
$(SPANK): $(SPANK_OBJ) $(CORE_OBJ) plugin/spank/topoplace.lds
	$(CC) -shared $(HARDEN_LD) -Wl,--version-script=plugin/spank/topoplace.lds \
	  -o $@ $(SPANK_OBJ) $(CORE_OBJ) $(LIBS) $(LDFLAGS)

$(BUILD)/tests/%: tests/unit/%.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -Icore/src -Itests/unit $(CFLAGS_ALL) $(DEPFLAGS) \
	  -Wno-missing-prototypes -Wno-format-truncation \
	  -DTP_TEST_DATA='"$(CURDIR)/tests/data"' -DTP_SOURCE_DIR='"$(CURDIR)"' \
	  -o $@ $< $(LIB_A) $(CHECK_LIBS) $(LIBS)

# The plugin's pure helpers, tested without Slurm.
SPANK_PURE_OBJ = $(addprefix $(BUILD)/plugin/spank/, hints.o lists.o site.o srun_args.o)
$(BUILD)/tests/test_plugin: tests/unit/test_plugin.c $(SPANK_PURE_OBJ) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -Iplugin/spank -Itests/unit $(CFLAGS_ALL) $(DEPFLAGS) \
	  -Wno-missing-prototypes -o $@ $< $(SPANK_PURE_OBJ) $(LIB_A) $(CHECK_LIBS) $(LIBS)

$(BUILD)/bench/%: tests/bench/%.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -Icore/src $(CFLAGS_ALL) $(DEPFLAGS) -Wno-missing-prototypes \
	  -o $@ $< $(LIB_A) $(LIBS)

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -Icore/src $(CFLAGS_ALL) $(DEPFLAGS) -fsanitize=fuzzer \
	  -o $@ $< $(LIB_A) $(LIBS)

$(BUILD)/topoplace.pc: contrib/topoplace.pc.in Makefile core/include/topoplace/version.h
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	    -e 's|@INCDIR@|$(INCDIR)|g' -e 's|@VERSION@|$(VERSION)|g' $< > $@

-include $(CORE_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(SPANK_OBJ:.o=.d) \
         $(UNIT_BIN:=.d) $(BENCH_BIN:=.d) $(FUZZ_BIN:=.d)

deps:
	@sh contrib/install-deps.sh

deps-bench:
	@sh contrib/install-deps.sh bench

deps-fuzz:
	@sh contrib/install-deps.sh fuzz

deps-doc:
	@sh contrib/install-deps.sh doc

run: deps
	$(MAKE) all
	sh tests/cli/demo.sh $(CLI)

unit: $(UNIT_BIN)
	@sh tests/run-unit.sh $(UNIT_BIN)

cli-tests: $(CLI)
	@sh tests/cli/run.sh $(CLI)

slurm-tests: all
	@BUILD=$(BUILD) sh tests/slurm/run.sh

check: deps deps-fuzz deps-doc
	$(MAKE) all
	$(MAKE) unit
	$(MAKE) cli-tests
	$(MAKE) doc-tests
	$(MAKE) fuzz-smoke
	$(MAKE) slurm-tests
	$(MAKE) install-tests

install-tests: all
	@sh tests/install.sh $(BUILD)

doc-tests: $(CLI)
	@sh tests/doc.sh $(CLI)

slurm-demo: deps
	$(MAKE) all
	BUILD=$(BUILD) sh tests/slurm/demo.sh

# Benchmarks build in their own directory so that -O3 is really used.  The
# Zoltan2 driver (bench_peers' peer, C++ against Debian's Trilinos) is built
# when it can be; without it bench_peers prints Zoltan2 as not built.
bench: deps deps-bench
	$(MAKE) BUILD=build-bench OPT=-O3 all $(BENCH_BIN:$(BUILD)/%=build-bench/%)
	-$(MAKE) BUILD=build-bench zoltan2-map
	BUILD=build-bench sh tests/bench/run.sh

ZOLTAN2_LIBS = -ltrilinos_zoltan2 -ltrilinos_tpetra -ltrilinos_teuchoscomm \
	-ltrilinos_teuchoscore -ltrilinos_teuchosparameterlist \
	-ltrilinos_kokkoscore -ltrilinos_zoltan
zoltan2-map: $(BUILD)/bench-tools/zoltan2_map
$(BUILD)/bench-tools/zoltan2_map: tests/bench/zoltan2_map.cc
	@mkdir -p $(dir $@)
	mpicxx -O2 -std=c++17 -w -I/usr/include/trilinos -o $@ $< $(ZOLTAN2_LIBS)

asan:
	$(MAKE) BUILD=build-asan OPT=-O1 EXTRA_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	  LDFLAGS="-fsanitize=address,undefined" unit cli-tests

fuzz-bins: $(FUZZ_BIN)

fuzz-build:
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=clang OPT=-O1 \
	  EXTRA_CFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" LDFLAGS="$(FUZZ_SAN)" fuzz-bins

fuzz: deps-fuzz
	$(MAKE) fuzz-build
	sh tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

fuzz-smoke:
	$(MAKE) fuzz-build
	sh tests/fuzz/run.sh --smoke $(FUZZ_BUILD) $(FUZZ_SMOKE_SECONDS)

valgrind: $(UNIT_BIN)
	@sh tests/run-unit.sh --valgrind $(UNIT_BIN)

install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR)/topoplace $(DESTDIR)$(BINDIR) \
	  $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
	  $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(SPANKDIR)
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
	install -m 644 doc/topoplace.conf.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 644 doc/topoplace-spank.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 755 $(SPANK) $(DESTDIR)$(SPANKDIR)/

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libtopoplace.* $(DESTDIR)$(BINDIR)/topoplace \
	  $(DESTDIR)$(LIBDIR)/pkgconfig/topoplace.pc $(DESTDIR)$(MANDIR)/man1/topoplace.1 \
	  $(DESTDIR)$(MANDIR)/man5/topoplace.conf.5 $(DESTDIR)$(MANDIR)/man8/topoplace-spank.8 \
	  $(DESTDIR)$(SPANKDIR)/topoplace.so
	rm -rf $(DESTDIR)$(INCDIR)/topoplace

clean:
	rm -rf build build-asan build-bench build-fuzz
