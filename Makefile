# topoplace — build, test, benchmark, install.
#
#   make run      install what is missing, build, run the demo job
#   make check    install what is missing, build, run every test
#   make abi-check  the library's exports and structure layouts against the
#                 committed record (make abi-update rewrites it; tests/abi/check.sh)
#   make doc-tests  the man pages name every option and key; they format cleanly
#   make bench    benchmarks (prints tables)
#   make install  PREFIX=/usr/local DESTDIR=
#   make install-plugstack  the plugstack.conf.d snippet (SYSCONFDIR=/etc)
#   make deb      Debian packages into $(BUILD)/deb (doc/packaging.md)
#   make dist     the source tarball (rpmbuild -ta; packaging/rpm/topoplace.spec)
#   make check-packages  build, install and test the packages (CI, root)
#   make release-tests  the plugin against every Slurm release's headers
#   make slurm-tests-release  the cluster suite on Slurm releases built from
#                 ../shared/slurm (SLURM_TEST_RELEASES, default 26.05.3 24.11.7
#                 25.11.7; each built once into /var/cache/topoplace-slurm)
#   make slurm-topology-tests  Slurm 26.05 with only topology.yaml, no network
#   make slurm-layout-tests  srun's own layouts against the model (a matrix)
#                 in topoplace.conf
#   make SLURM_PREFIX=/opt/slurm  the plugin against that Slurm's headers
#                 (default: pkg-config's slurm.pc, else the include path)
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
SYSCONFDIR ?= /etc
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
# The SPANK plugin needs only what a compute node with slurmd has (Debian 12:
# json-c, hwloc and libyaml come with slurmd, METIS does not): it loads METIS
# with dlopen() when a graph mapping needs it (core/src/map/metis_load.h).
# dlopen() (METIS in the plugin, the GPU vendors' libraries in the core:
# node_vendor*.c) is in libc from glibc 2.34 (Debian 12, RHEL 9); RHEL 8's
# glibc 2.28 has it in libdl: -ldl only where a program using it does not
# link without it.
DL_LIBS := $(shell printf '\043include <dlfcn.h>\nint main(void) { return !dlopen("x", RTLD_NOW); }\n' | \
             $(CC) -x c - -o /dev/null >/dev/null 2>&1 || echo -ldl)
SPANK_LIBS = $(shell pkg-config --libs json-c 2>/dev/null || echo -ljson-c) \
             $(shell pkg-config --libs yaml-0.1 2>/dev/null || echo -lyaml) -lhwloc -lm -lpthread \
             $(DL_LIBS)
# Slurm's headers, seen only by plugin/ (nothing else includes
# <slurm/...>): SLURM_PREFIX=/opt/slurm takes that install's include/;
# without it, slurm.pc where pkg-config finds one, else the default include
# path (Debian's libslurm-dev).  -isystem: a release's headers are not ours
# to warn about under DEVELOPER=1.
SLURM_PREFIX ?=
SLURM_CPPFLAGS := $(if $(SLURM_PREFIX),-isystem $(SLURM_PREFIX)/include,$(patsubst \
                  -I%,-isystem %,$(shell pkg-config --cflags slurm 2>/dev/null)))
# The release those headers are, "23.11.11" (`make slurm-version`), from
# SLURM_VERSION_NUMBER: the installed headers have no version string.
SLURM_VERSION_CMD = n=$$(printf '\#include <slurm/slurm_version.h>\nSLURM_VERSION_NUMBER\n' | \
                    $(CC) $(SLURM_CPPFLAGS) -E -P -x c - 2>/dev/null | tail -n 1); \
                    case $$n in 0x*) printf '%d.%02d.%d\n' $$((n >> 16 & 255)) \
                    $$((n >> 8 & 255)) $$((n & 255)) ;; esac
# A SLURM_PREFIX without headers would quietly fall back to the default path.
SLURM_CHECK = $(if $(SLURM_PREFIX),test -r $(SLURM_PREFIX)/include/slurm/spank.h || \
              { echo "SLURM_PREFIX=$(SLURM_PREFIX): no $(SLURM_PREFIX)/include/slurm/spank.h" >&2; \
                exit 1; };)
LIBS    = $(SPANK_LIBS) -lmetis
# The command's own needs besides libtopoplace.so: JSON output, libm.
CLI_LIBS = $(shell pkg-config --libs json-c 2>/dev/null || echo -ljson-c) -lm
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm)

VERSION = $(shell sed -n 's/^\#define TOPOPLACE_VERSION "\(.*\)"/\1/p' core/include/topoplace/version.h)
# The ABI's number: raised on every incompatible change of the exported
# symbols or the public structures (tests/abi/check.sh), together with the
# Debian package's name (libtopoplaceN) and the RPM spec's file list.  The
# file installed is libtopoplace.so.SOVERSION.MINOR.PATCH of the release.
SOVERSION = 1
SONAME  = libtopoplace.so.$(SOVERSION)
LIB_REALNAME = $(SONAME).$(word 2,$(subst ., ,$(VERSION))).$(word 3,$(subst ., ,$(VERSION)))
comma  := ,

# ---- sources (listed: a stray file in a folder does not enter the build)

CORE_SRC = $(addprefix core/src/, \
	conf/conf.c \
	conf/conf_check.c \
	conf/conf_coords.c \
	conf/conf_models.c \
	conf/conf_nodes.c \
	conf/conf_records.c \
	conf/conf_settings.c \
	conf/conf_slurm.c \
	conf/conf_slurm_build.c \
	conf/kind_block.c \
	conf/kind_dragonfly.c \
	conf/kind_rings.c \
	conf/kind_torus.c \
	conf/kind_tree.c \
	conf/kinds.c \
	input/alloc.c \
	input/hostfile.c \
	job/job.c \
	job/job_context.c \
	job/job_groups.c \
	job/job_map.c \
	job/job_models.c \
	job/job_node.c \
	job/job_report.c \
	map/bisect.c \
	map/block_map.c \
	map/free_shells.c \
	map/geom_fold.c \
	map/geom_part.c \
	map/geom_points.c \
	map/geom_prepare.c \
	map/geom_score.c \
	map/geom_seam.c \
	map/geom_search.c \
	map/geom_select.c \
	map/geom_subset.c \
	map/geom_tree.c \
	map/graphmap.c \
	map/graphmap_bipart.c \
	map/graphmap_greedy.c \
	map/graphmap_lanes.c \
	map/graphmap_refine.c \
	map/graphmap_slots.c \
	map/hiermap.c \
	map/hpaths.c \
	map/metis_load.c \
	map/metis_split.c \
	map/metrics.c \
	map/modcolor.c \
	map/node_tiles.c \
	map/parmap.c \
	map/parstep.c \
	map/parmap_swaps.c \
	map/place.c \
	map/place_auto.c \
	map/place_cand.c \
	map/place_choice.c \
	map/place_early.c \
	map/place_orders.c \
	map/place_refine.c \
	map/place_side.c \
	map/predict.c \
	map/predict_fill.c \
	map/rounds_guard.c \
	map/slurm_layout.c \
	map/time_trades.c \
	net/block.c \
	net/block_build.c \
	net/dragonfly.c \
	net/hashtab.c \
	net/machine.c \
	net/name_runs.c \
	net/ring.c \
	net/torus.c \
	net/torus3d.c \
	net/torus3d_build.c \
	net/tree.c \
	net/tree_build.c \
	node/gpu_matrix.c \
	node/gpusel.c \
	node/gpusel_cost.c \
	node/gpusel_search.c \
	node/node.c \
	node/node_build.c \
	node/node_cpus.c \
	node/node_detect.c \
	node/node_dist.c \
	node/node_export.c \
	node/node_links.c \
	node/node_links_amd.c \
	node/node_links_rocm.c \
	node/node_links_text.c \
	node/node_parts.c \
	node/node_query.c \
	node/node_routes.c \
	node/node_tasks.c \
	node/node_vendor.c \
	node/node_vendor_amd.c \
	node/node_vendor_tool.c \
	node/node_xml.c \
	node/node_xml_dist.c \
	node/node_xml_objects.c \
	node/node_xml_scan.c \
	pattern/graph.c \
	pattern/graph_groups.c \
	pattern/graph_heavy.c \
	pattern/json_graph.c \
	pattern/pattern_detect.c \
	pattern/grid_infer.c \
	pattern/parallel.c \
	pattern/stencil.c \
	slurm/slurm_conf.c \
	slurm/slurm_join.c \
	slurm/slurm_live.c \
	slurm/slurm_order.c \
	slurm/slurm_topology.c \
	slurm/slurm_yaml.c \
	slurm/topology_conf.c \
	util/digits.c \
	util/hostlist.c \
	util/hostlist_fmt.c \
	util/lines.c \
	util/names.c \
	util/parallel.c \
	util/util.c \
	util/version.c \
)
CLI_SRC = $(addprefix cli/, \
	bind.c \
	check_config.c \
	diag.c \
	eval.c \
	formats.c \
	help.c \
	main.c \
	map.c \
	map_output.c \
	map_svg.c \
	node_info.c \
	output.c \
	slurm_live.c \
)
# What both front ends share (frontend/launch.h, frontend/svg.h): the
# --topo-* options and Slurm's lists (topoplace bind reads them as the plugin
# does), and the pictures (--topo-report=svg, topoplace map --format svg).
# An archive: each front end links only the objects it calls.
FRONT_SRC = $(addprefix frontend/, \
	hints.c \
	lists.c \
	svg.c \
	svg_dragonfly.c \
	svg_map.c \
	svg_node.c \
	svg_torus.c \
	svg_tree.c \
)
SPANK_SRC = $(addprefix plugin/, \
	batch.c \
	dispatch.c \
	place.c \
	site.c \
	slurm_running.c \
	spank_env.c \
	srun.c \
	srun_args.c \
	task.c \
	userfile.c \
)
UNIT_SRC = $(addprefix tests/unit/, \
	test_amd.c \
	test_bisect.c \
	test_block.c \
	test_conf.c \
	test_detect.c \
	test_dragonfly.c \
	test_geom.c \
	test_free_shells.c \
	test_gpusel.c \
	test_graphmap.c \
	test_input.c \
	test_job.c \
	test_lines.c \
	test_machine.c \
	test_metis.c \
	test_metrics.c \
	test_predict.c \
	test_network.c \
	test_node.c \
	test_node_xml3.c \
	test_partitions.c \
	test_parallel.c \
	test_pattern.c \
	test_place.c \
	test_plugin.c \
	test_slingshot.c \
	test_slurm_rings.c \
	test_slurm_topology.c \
	test_tiles.c \
	test_tree.c \
	test_vendor.c \
)
BENCH_SRC = $(addprefix tests/bench/, \
	bench_block.c \
	bench_geom.c \
	bench_gpu.c \
	bench_graph.c \
	bench_hier.c \
	bench_input.c \
	bench_node.c \
	bench_output.c \
	bench_peers.c \
	bench_scale.c \
	bench_slingshot.c \
)
FUZZ_TARGETS = \
	block \
	conf \
	coordfile \
	gpu_links \
	gpu_matrix \
	hostfile \
	hostlist \
	json_graph \
	launch_lists \
	node_xml \
	parallel \
	slurm_conf \
	slurm_live \
	slurm_order \
	srun_args \
	stencil \
	topology \
	topology_yaml \


# Stand-ins for the GPU vendors' libraries (tests/standin/standin.h), which
# test_vendor loads in place of NVML, AMD SMI and ROCm SMI.
STANDIN_DIR = $(BUILD)/standin
STANDIN = $(STANDIN_DIR)/libnvidia-ml.so.1 $(STANDIN_DIR)/libamd_smi.so \
          $(STANDIN_DIR)/librocm_smi64.so.1

CORE_OBJ  = $(CORE_SRC:core/src/%.c=$(BUILD)/core/%.o)
CLI_OBJ   = $(CLI_SRC:cli/%.c=$(BUILD)/cli/%.o)
FRONT_OBJ = $(FRONT_SRC:frontend/%.c=$(BUILD)/frontend/%.o)
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

# The trace library (PMPI), once per MPI ABI found: Debian's Open MPI and
# MPICH install side by side, each with its own mpicc.
TRACE_MPIS = $(if $(shell command -v mpicc.openmpi 2>/dev/null),openmpi) \
             $(if $(shell command -v mpicc.mpich 2>/dev/null),mpich)
TRACE_LIBS = $(foreach m,$(TRACE_MPIS),$(BUILD)/trace/$(m)/libtopoplace-trace.so)

LIB_A  = $(BUILD)/libtopoplace.a
FRONT_A = $(BUILD)/libtopoplace-frontend.a
LIB_SO = $(BUILD)/libtopoplace.so
LIB_SO_SONAME = $(BUILD)/$(SONAME)
CLI    = $(BUILD)/topoplace
# The command as `make install` installs it (see $(CLI_INST) below).
CLI_INST = $(BUILD)/install/topoplace
SPANK  = $(BUILD)/topoplace.so

.PHONY: all deps deps-check run check abi-check layers-check abi-update standin unit cli-tests slurm-tests install-tests doc-tests \
        deps-tests bench install install-plugstack uninstall deb dist rpm-tests check-packages \
        asan valgrind clean slurm-demo deps-bench deps-doc deps-fuzz deps-mpi fuzz fuzz-smoke \
        fuzz-build fuzz-bins zoltan2-map slurm-version release-tests slurm-tests-release slurm-topology-tests slurm-layout-tests options-tests FORCE

all: $(LIB_A) $(LIB_SO) $(CLI) $(CLI_INST) $(SPANK) $(BUILD)/topoplace-hydra-srun $(BUILD)/topoplace.pc \
     $(TRACE_LIBS)

# MPICH's launcher helper next to the plugin, where the batch step looks for
# it (beside topoplace.so), in the build tree as after make install.
$(BUILD)/topoplace-hydra-srun: contrib/topoplace-hydra-srun
	@mkdir -p $(dir $@)
	install -m 755 $< $@

# The core keeps everything but its TP_EXPORT API hidden in the shared
# library (core/include/topoplace/export.h).  Private headers are named from
# core/src ("net/network.h").
$(BUILD)/core/%.o: core/src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -Icore/src $(CFLAGS_ALL) -fvisibility=hidden $(DEPFLAGS) -c $< -o $@

$(BUILD)/cli/%.o: cli/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -Icli -Ifrontend $(CFLAGS_ALL) $(DEPFLAGS) -c $< -o $@

$(BUILD)/frontend/%.o: frontend/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -Ifrontend $(CFLAGS_ALL) $(DEPFLAGS) -c $< -o $@

# The plugin's objects see Slurm's headers, and are rebuilt whenever those
# change: another SLURM_PREFIX, or another release at the same place
# (-MMD lists no -isystem header).  The stamp records the flags, the release
# and a checksum of the preprocessed headers, and is rewritten only when
# they differ, so that an object built for another release is never linked.
SLURM_STAMP = $(BUILD)/plugin/slurm.stamp
$(SLURM_STAMP): FORCE
	@mkdir -p $(dir $@)
	@$(SLURM_CHECK) v=$$($(SLURM_VERSION_CMD)); \
	h=$$(printf '#include <slurm/spank.h>\n#include <slurm/slurm_version.h>\n' | \
	  $(CC) $(SLURM_CPPFLAGS) -E -x c - 2>/dev/null | cksum); \
	printf 'flags %s\nslurm %s\nheaders %s\n' '$(SLURM_CPPFLAGS)' "$$v" "$$h" > $@.new; \
	if cmp -s $@.new $@; then rm -f $@.new; else \
	  mv $@.new $@; echo "$(SPANK): Slurm $${v:-headers not found} ($(or $(SLURM_CPPFLAGS),default include path))"; fi

$(BUILD)/plugin/%.o: plugin/%.c $(SLURM_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(SLURM_CPPFLAGS) -Iplugin -Ifrontend $(CFLAGS_ALL) $(DEPFLAGS) -c $< -o $@

# The Slurm release the plugin is built for ("22.05.8"), for packaging.
slurm-version:
	@$(SLURM_CHECK) v=$$($(SLURM_VERSION_CMD)); [ -n "$$v" ] || { echo "slurm-version: no" \
	  "<slurm/slurm_version.h> ($(or $(SLURM_CPPFLAGS),default include path))" >&2; exit 1; }; \
	echo "$$v"

FORCE:

$(LIB_A): $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FRONT_A): $(FRONT_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LIB_SO): $(CORE_OBJ)
	$(CC) -shared -Wl,-soname,$(SONAME) $(HARDEN_LD) -o $@ $^ $(LIBS) $(LDFLAGS)

# What a program linked with the library asks the loader for (its SONAME).
$(LIB_SO_SONAME): $(LIB_SO)
	ln -sf $(notdir $(LIB_SO)) $@

# The command links the shared library, so that the library has a user in
# the tree and the command can call only what the library exports.  In the
# build tree it finds the library next to itself ($ORIGIN).
$(CLI): $(CLI_OBJ) $(FRONT_A) $(LIB_SO) $(LIB_SO_SONAME)
	$(CC) $(CFLAGS_ALL) $(HARDEN_LD) -o $@ $(CLI_OBJ) $(FRONT_A) $(LIB_SO) \
	  $(CLI_LIBS) -Wl,-rpath,'$$ORIGIN' $(LDFLAGS)

# The installed command finds the installed library through INSTALL_RPATH:
# by default LIBDIR relative to BINDIR ($ORIGIN/../lib), so that a DESTDIR
# or a moved PREFIX works too.  Packages that install the library in the
# loader's default path (debian/rules, contrib/rpm/topoplace.spec) set
# INSTALL_RPATH= (empty): no RPATH, which lintian and rpmlint object to.
# The stamp relinks the command when INSTALL_RPATH changes.
INSTALL_RPATH ?= $$ORIGIN/$(shell realpath -m --relative-to=$(BINDIR) $(LIBDIR))
CLI_INST_STAMP = $(BUILD)/install/rpath.stamp
$(CLI_INST_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(INSTALL_RPATH)' > $@.new; \
	if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; fi

$(CLI_INST): $(CLI_OBJ) $(FRONT_A) $(LIB_SO) $(CLI_INST_STAMP)
	$(CC) $(CFLAGS_ALL) $(HARDEN_LD) -o $@ $(CLI_OBJ) $(FRONT_A) $(LIB_SO) \
	  $(CLI_LIBS) $(if $(INSTALL_RPATH),-Wl$(comma)-rpath$(comma)'$(INSTALL_RPATH)') $(LDFLAGS)

# The SPANK plugin carries the core statically, so that slurmstepd needs no
# extra library path, and exports only what Slurm looks up (version script).
# Its copy of the core loads METIS at run time (metis_load.c, TP_METIS_DLOPEN).
SPANK_CORE_OBJ = $(filter-out $(BUILD)/core/map/metis_load.o,$(CORE_OBJ)) \
                 $(BUILD)/core/map/metis_dlopen.o
$(BUILD)/core/map/metis_dlopen.o: core/src/map/metis_load.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -Icore/src -DTP_METIS_DLOPEN $(CFLAGS_ALL) -fvisibility=hidden \
	  $(DEPFLAGS) -c $< -o $@

$(SPANK): $(SPANK_OBJ) $(FRONT_A) $(SPANK_CORE_OBJ) plugin/topoplace.lds
	$(CC) -shared $(HARDEN_LD) -Wl,--version-script=plugin/topoplace.lds \
	  -o $@ $(SPANK_OBJ) $(FRONT_A) $(SPANK_CORE_OBJ) $(SPANK_LIBS) $(LDFLAGS)

$(BUILD)/trace/%/libtopoplace-trace.so: contrib/trace/trace.c
	@mkdir -p $(dir $@)
	mpicc.$* $(WARN) -fPIC -shared $(HARDEN_C) $(CFLAGS) $(HARDEN_LD) -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -Icore/src -Itests/unit $(CFLAGS_ALL) $(DEPFLAGS) \
	  -Wno-missing-prototypes -Wno-format-truncation \
	  -DTP_TEST_DATA='"$(CURDIR)/tests/data"' -DTP_SOURCE_DIR='"$(CURDIR)"' \
	  -DTP_STANDIN_DIR='"$(abspath $(STANDIN_DIR))"' \
	  -o $@ $< $(LIB_A) $(CHECK_LIBS) $(LIBS)

# Each stand-in under the soname the core dlopens; ROCm SMI's is the AMD
# SMI stand-in again (one file answers both).
$(STANDIN_DIR)/libnvidia-ml.so.1: tests/standin/nvml.c tests/standin/standin.h
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -Wno-missing-prototypes -fPIC -shared $(CFLAGS) \
	  -Wl,-soname,$(notdir $@) -o $@ $<

$(STANDIN_DIR)/libamd_smi.so $(STANDIN_DIR)/librocm_smi64.so.1: tests/standin/amdsmi.c \
  tests/standin/standin.h
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -Wno-missing-prototypes -fPIC -shared $(CFLAGS) \
	  -Wl,-soname,$(notdir $@) -o $@ $<

# The plugin's pure helpers, tested without Slurm.
SPANK_PURE_OBJ = $(addprefix $(BUILD)/plugin/, site.o srun_args.o userfile.o)
$(BUILD)/tests/test_plugin: tests/unit/test_plugin.c $(SPANK_PURE_OBJ) $(FRONT_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -Iplugin -Ifrontend -Itests/unit $(CFLAGS_ALL) $(DEPFLAGS) \
	  -Wno-missing-prototypes -o $@ $< $(SPANK_PURE_OBJ) $(FRONT_A) $(LIB_A) $(CHECK_LIBS) $(LIBS)

# A node without METIS: metis_load.c as the plugin builds it, naming a library
# that does not exist; linked before the archive, so it replaces its copy.
$(BUILD)/tests/metis_missing.o: core/src/map/metis_load.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -Icore/src -DTP_METIS_DLOPEN \
	  -DTP_METIS_SONAME='"libtopoplace-test-no-metis.so.5"' $(CFLAGS_ALL) \
	  $(DEPFLAGS) -c $< -o $@

$(BUILD)/tests/test_metis: tests/unit/test_metis.c $(BUILD)/tests/metis_missing.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -Icore/src -Itests/unit $(CFLAGS_ALL) $(DEPFLAGS) \
	  -Wno-missing-prototypes -o $@ $< $(BUILD)/tests/metis_missing.o $(LIB_A) \
	  $(CHECK_LIBS) $(LIBS)

# bench_output times the command's own writers: cli/ without main.o (the
# bench is the main), and the front ends' archive they call.
BENCH_CLI_OBJ = $(filter-out $(BUILD)/cli/main.o,$(CLI_OBJ))
$(BUILD)/bench/bench_output: tests/bench/bench_output.c $(BENCH_CLI_OBJ) $(FRONT_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -Icore/src -Icli $(CFLAGS_ALL) $(DEPFLAGS) -Wno-missing-prototypes \
	  -o $@ $< $(BENCH_CLI_OBJ) $(FRONT_A) $(LIB_A) $(CLI_LIBS) $(LIBS)

$(BUILD)/bench/%: tests/bench/%.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -Icore/src $(CFLAGS_ALL) $(DEPFLAGS) -Wno-missing-prototypes \
	  -o $@ $< $(LIB_A) $(LIBS)

# srun_args also takes the plugin's pure parts (srun's command line, the
# plugstack's arguments), which need Slurm's headers
$(BUILD)/fuzz/fuzz_srun_args: $(SPANK_PURE_OBJ)
$(BUILD)/fuzz/fuzz_srun_args: FUZZ_OBJ = $(SPANK_PURE_OBJ)
$(BUILD)/fuzz/fuzz_srun_args: FUZZ_CPPFLAGS = $(SLURM_CPPFLAGS) -Iplugin

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FRONT_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(FUZZ_CPPFLAGS) -Icore/src -Ifrontend $(CFLAGS_ALL) $(DEPFLAGS) \
	  -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) $(FRONT_A) $(LIB_A) $(LIBS)

$(BUILD)/topoplace.pc: contrib/topoplace.pc.in Makefile core/include/topoplace/version.h
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	    -e 's|@INCDIR@|$(INCDIR)|g' -e 's|@VERSION@|$(VERSION)|g' \
	    -e 's|@DL_LIBS@|$(DL_LIBS)|g' $< > $@

-include $(CORE_OBJ:.o=.d) $(BUILD)/core/map/metis_dlopen.d $(BUILD)/tests/metis_missing.d \
         $(CLI_OBJ:.o=.d) $(FRONT_OBJ:.o=.d) $(SPANK_OBJ:.o=.d) \
         $(UNIT_BIN:=.d) $(BENCH_BIN:=.d) $(FUZZ_BIN:=.d)

# make run needs the build group only; make check everything its tests use.
deps:
	@sh contrib/install-deps.sh build

deps-check:
	@sh contrib/install-deps.sh check

deps-bench:
	@sh contrib/install-deps.sh bench

deps-fuzz:
	@sh contrib/install-deps.sh fuzz

deps-doc:
	@sh contrib/install-deps.sh doc

deps-mpi:
	@sh contrib/install-deps.sh mpi

run: deps
	$(MAKE) all
	sh tests/cli/demo.sh $(CLI)

# The ABI check runs first with the unit tests (and so in the packages'
# test step): a change of the exported API shows before anything else.
unit: $(UNIT_BIN) $(STANDIN) abi-check
	@sh tests/run-unit.sh $(UNIT_BIN)

abi-check: $(LIB_SO)
	@CC="$(CC)" sh tests/abi/check.sh $(BUILD)

# After a deliberate ABI change: rewrite core/libtopoplace.symbols and
# core/libtopoplace.layout, and commit them with it (an incompatible change
# needs a new SONAME: tests/abi/check.sh says which are).
# The core's parts call one way down (issue 51): no circle across parts,
# net/ calls no reader, the readers call nothing in map/ or job/.
layers-check: $(LIB_A)
	python3 tests/layers.py $(BUILD)

abi-update: $(LIB_SO)
	@CC="$(CC)" sh tests/abi/check.sh --update $(BUILD)

cli-tests: $(CLI)
	@sh tests/cli/run.sh $(CLI)
	@sh tests/cli/cpuset.sh $(CLI)
	@sh tests/cli/svg.sh $(CLI)
	@sh tests/cli/corpus.sh $(BUILD)

# the stand-in NVML stands behind the cluster test of detected node models
standin: $(STANDIN)

slurm-tests: all $(STANDIN)
	@BUILD=$(BUILD) sh tests/slurm/run.sh
	@BUILD=$(BUILD) sh tests/slurm/mpi.sh

check: deps-check
	$(MAKE) all
	$(MAKE) $(BENCH_BIN)    # built, not run (make bench): they follow the API
	$(MAKE) abi-check
	$(MAKE) layers-check
	$(MAKE) unit
	$(MAKE) cli-tests
	$(MAKE) doc-tests
	$(MAKE) fuzz-smoke
	$(MAKE) slurm-tests
	$(MAKE) slurm-tests-release
	$(MAKE) slurm-topology-tests
	$(MAKE) slurm-layout-tests
	$(MAKE) release-tests
	$(MAKE) options-tests
	$(MAKE) install-tests
	$(MAKE) deps-tests

install-tests: all
	@sh tests/install.sh $(BUILD)

doc-tests: $(CLI)
	@sh tests/doc.sh $(CLI)

# The plugin built against the headers of every Slurm release in
# ../shared/slurm (tests/slurm/release.sh), in build-releases.
release-tests:
	@sh tests/slurm/releases.sh

# Slurm 26.05 with only topology.yaml (tree, blocks with gaps, torus3d) and
# a topoplace.conf without a network.
slurm-topology-tests:
	@sh tests/slurm/topology.sh

# Slurm's own task layout against topoplace's model of it: a generated
# matrix (topology kind x tasks a node x distribution x even/uneven -n x
# TopologyParam/CR_NO_DIST_TOPO_BLOCK) on real 26.05.3 (452 cases, about 4
# minutes) and 24.11.7 clusters (54 cases on topology.conf, under a minute
# once that release is built, which the release suites need too).
SLURM_LAYOUT_RELEASES ?= 26.05.3 24.11.7
slurm-layout-tests:
	@for v in $(SLURM_LAYOUT_RELEASES); do sh tests/slurm/layout-matrix.sh $$v || exit 1; done

# srun's option table against every release's own option list.
options-tests:
	@sh tests/slurm/options.sh

# The cluster suite on Slurm releases built from ../shared/slurm (cached):
# 26.05 (topology-ordered layout, topology.yaml), 24.11 (Debian 13's) and
# 25.11.  Each costs about 3 minutes of jobs, and the first time a build
# of what the tests run (tests/slurm/release.sh: about 160 s of CPU).
# SLURM_TEST_RELEASE=V (one) is still taken.
SLURM_TEST_RELEASES ?= $(if $(SLURM_TEST_RELEASE),$(SLURM_TEST_RELEASE),26.05.3 24.11.7 25.11.7)
slurm-tests-release:
	@sh tests/slurm/on-release.sh $(SLURM_TEST_RELEASES)

# The plugin needs only libraries a compute node with slurmd has.
deps-tests: $(SPANK)
	@sh tests/deps.sh $(SPANK)

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
# Without mpicxx or Zoltan2's headers: one line, and bench_peers' Zoltan2
# rows say "not run".  Debian's Trilinos is built with Open MPI: its compiler
# wrapper by name, since mpicxx may point to MPICH's (the mpi group has both).
ZOLTAN2_HEADER = /usr/include/trilinos/Zoltan2_TaskMapping.hpp
MPICXX = $(shell command -v mpicxx.openmpi 2>/dev/null || echo mpicxx)
zoltan2-map:
	@if command -v $(MPICXX) >/dev/null 2>&1 && [ -f $(ZOLTAN2_HEADER) ]; then \
	  $(MAKE) --no-print-directory $(BUILD)/bench-tools/zoltan2_map; \
	else \
	  echo "zoltan2-map: not built: needs $(MPICXX) and $(ZOLTAN2_HEADER)" \
	    "(sh contrib/install-deps.sh bench); bench_peers runs without Zoltan2"; \
	fi
$(BUILD)/bench-tools/zoltan2_map: tests/bench/zoltan2_map.cc
	@mkdir -p $(dir $@)
	$(MPICXX) -O2 -std=c++17 -w -I/usr/include/trilinos -o $@ $< $(ZOLTAN2_LIBS)

# The sanitizers run the tests three to five times slower: Check's
# per-test timeouts (60 s for the search's cases) scale with them.
asan:
	CK_TIMEOUT_MULTIPLIER=$${CK_TIMEOUT_MULTIPLIER:-4} \
	$(MAKE) BUILD=build-asan OPT=-O1 EXTRA_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	  LDFLAGS="-fsanitize=address,undefined" unit cli-tests

fuzz-bins: $(FUZZ_BIN)

fuzz-build:
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=clang OPT=-O1 \
	  EXTRA_CFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" LDFLAGS="$(FUZZ_SAN)" fuzz-bins

fuzz: deps-fuzz
	$(MAKE) fuzz-build
	TP_FUZZ_TARGETS="$(strip $(FUZZ_TARGETS))" sh tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

fuzz-smoke:
	$(MAKE) fuzz-build
	TP_FUZZ_TARGETS="$(strip $(FUZZ_TARGETS))" sh tests/fuzz/run.sh --smoke $(FUZZ_BUILD) \
	  $(FUZZ_SMOKE_SECONDS)

valgrind: $(UNIT_BIN) $(STANDIN)
	@sh tests/run-unit.sh --valgrind $(UNIT_BIN)

install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR)/topoplace $(DESTDIR)$(BINDIR) \
	  $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
	  $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(SPANKDIR)
	install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/$(LIB_REALNAME)
	ln -sf $(LIB_REALNAME) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libtopoplace.so
	install -m 644 core/include/topoplace/*.h $(DESTDIR)$(INCDIR)/topoplace/
	install -m 755 $(CLI_INST) $(DESTDIR)$(BINDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	    -e 's|@INCDIR@|$(INCDIR)|g' -e 's|@VERSION@|$(VERSION)|g' \
	    -e 's|@DL_LIBS@|$(DL_LIBS)|g' \
	    contrib/topoplace.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/topoplace.pc
	install -m 644 doc/topoplace.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 doc/topoplace.conf.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 644 doc/topoplace-spank.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 755 $(SPANK) $(DESTDIR)$(SPANKDIR)/
	install -m 755 contrib/topoplace-hydra-srun $(DESTDIR)$(SPANKDIR)/
	for m in $(TRACE_MPIS); do install -d $(DESTDIR)$(SPANKDIR)/$$m && \
	  install -m 755 $(BUILD)/trace/$$m/libtopoplace-trace.so $(DESTDIR)$(SPANKDIR)/$$m/; done

# The plugstack.conf.d snippet: the plugin's line, commented out.
$(BUILD)/plugstack-topoplace.conf: contrib/plugstack.conf.in Makefile
	@mkdir -p $(dir $@)
	sed -e 's|@SPANKDIR@|$(SPANKDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' $< > $@

install-plugstack: $(BUILD)/plugstack-topoplace.conf
	install -d $(DESTDIR)$(SYSCONFDIR)/slurm/plugstack.conf.d
	install -m 644 $< $(DESTDIR)$(SYSCONFDIR)/slurm/plugstack.conf.d/topoplace.conf

# Debian packages, built from a copy of the source tree (tracked and new
# files) so that the checkout stays clean; the .deb files land in
# $(BUILD)/deb.  The tests ran already in make check: DEB_BUILD_OPTIONS
# has nocheck unless given.  SLURM_PREFIX and SLURM_DEB_PACKAGE go to
# debian/rules (slurm-topoplace for another Slurm, doc/packaging.md).
DEB_BUILD_OPTIONS ?= nocheck
deb:
	@sh contrib/install-deps.sh build package
	BUILD=$(BUILD) DEB_BUILD_OPTIONS="$(DEB_BUILD_OPTIONS)" \
	  $(if $(SLURM_PREFIX),SLURM_PREFIX=$(abspath $(SLURM_PREFIX))) \
	  $(if $(filter-out undefined,$(origin SLURM_DEB_PACKAGE)),SLURM_DEB_PACKAGE="$(SLURM_DEB_PACKAGE)") \
	  sh packaging/build-deb.sh

# The source tarball (rpmbuild -ta takes it): $(BUILD)/topoplace-VERSION.tar.gz
dist:
	@BUILD=$(BUILD) sh packaging/dist.sh

# The RPM spec checked on this Debian machine (doc/packaging.md).
rpm-tests: dist
	@BUILD=$(BUILD) sh tests/rpmspec.sh

# CI: build the packages, install them, check what they hold and run the
# cluster tests against the installed plugin and command (root).
check-packages: deb
	$(MAKE) rpm-tests
	@BUILD=$(BUILD) sh tests/packages.sh

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libtopoplace.* $(DESTDIR)$(BINDIR)/topoplace \
	  $(DESTDIR)$(LIBDIR)/pkgconfig/topoplace.pc $(DESTDIR)$(MANDIR)/man1/topoplace.1 \
	  $(DESTDIR)$(MANDIR)/man5/topoplace.conf.5 $(DESTDIR)$(MANDIR)/man8/topoplace-spank.8 \
	  $(DESTDIR)$(SPANKDIR)/topoplace.so $(DESTDIR)$(SPANKDIR)/topoplace-hydra-srun
	rm -rf $(DESTDIR)$(SPANKDIR)/openmpi $(DESTDIR)$(SPANKDIR)/mpich
	rm -rf $(DESTDIR)$(INCDIR)/topoplace

clean:
	rm -rf build build-asan build-bench build-fuzz build-releases
