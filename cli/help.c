/* topoplace command — the help texts: the general help and each command's,
 * printed by main.c (-h, help CMD) and by every command's own -h.
 *
 * A file of their own, below main.c and the commands alike: main.c calls
 * the commands and this; the commands call this; nothing here calls back
 * up.  tests/doc.sh checks that doc/topoplace.1 names every long option
 * and command written here. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char help_general[] =
"usage: topoplace COMMAND [OPTIONS]\n"
"\n"
"Topology-aware placement of the tasks of a Slurm job onto its nodes.\n"
"\n"
"Commands:\n"
"  map           compute a task-to-node mapping; print a hostfile, JSON or\n"
"                an SVG picture\n"
"  eval          score an existing hostfile against Slurm's block order\n"
"  check-config  validate a topoplace.conf and summarise the network\n"
"  node-info     show a node's sockets, PCIe tree, NVLinks and GPU paths\n"
"  bind          give an MPI rank its CPUs and GPUs, then run the program\n"
"  help [CMD]    show this help, or the help of CMD\n"
"\n"
"Options:\n"
"  -h, --help     show this help\n"
"  -V, --version  show the version\n"
"\n"
"Example:\n"
"  topoplace map --config /etc/slurm/topoplace.conf \\\n"
"      --nodes \"$SLURM_JOB_NODELIST\" --ntasks 512 --stencil 8x8x8:7pt \\\n"
"      --output hosts && SLURM_HOSTFILE=hosts srun --distribution=arbitrary ...\n"
"\n"
"Exit status: 0 success, 1 internal failure, 2 bad input or usage.\n"
"See topoplace(1) for details.\n";

static const char help_map[] =
"usage: topoplace map --config FILE --nodes HOSTLIST\n"
"                     [--ntasks N] [--tasks-per-node N|SPEC]\n"
"                     [--stencil SPEC | --graph FILE | --parallel SPEC]\n"
"                     [--gpu-matrix FILE] [OPTIONS]\n"
"\n"
"Map the tasks of a job onto its nodes and print the node of every rank, one\n"
"per line (a SLURM_HOSTFILE), a rankfile or a JSON report.  The task count\n"
"comes from --ntasks, --tasks-per-node or the pattern.\n"
"\n"
"The job:\n"
"  -c, --config FILE         topoplace.conf describing the network\n"
"  -w, --nodes HOSTLIST      the job's nodes in Slurm's order (nid[0-7,12]);\n"
"                            @FILE reads the hostlist from FILE\n"
"  -n, --ntasks N            number of tasks; alone, spread over the nodes as\n"
"                            Slurm does (the first N%nodes get one more)\n"
"  -N, --tasks-per-node N|SPEC\n"
"                            slots per node: a count, or Slurm's\n"
"                            SLURM_TASKS_PER_NODE form (2(x3),1); with\n"
"                            --ntasks, N may leave surplus slots unused\n"
"  -s, --stencil SPEC        stencil pattern, e.g. 16x16x16:7pt:periodic=all\n"
"  -g, --graph FILE          JSON communication graph (tasks, edges, coords)\n"
"      --parallel SPEC       a training job's layout, one rank a GPU:\n"
"                            tp=8,pp=4[,cp=N,ep=N,dp=N][,order=tp-cp-ep-dp-pp\n"
"                            | mesh=pp,dp,cp,tp][,bytes=tp:64,dp:8,...]\n"
"                            [,model=hidden:H,layers:L,seq:S[,mbs:B,\n"
"                            micro:M|gbs:G,experts:E,topk:K]] (volumes from\n"
"                            the model; doc/ai-clusters.md)[,micro=M]; dp\n"
"                            defaults to the rest\n"
"      --slurm-conf FILE     Slurm's slurm.conf (default $SLURM_CONF, else\n"
"                            /etc/slurm/slurm.conf): a config without\n"
"                            Network= takes the network from the\n"
"                            topology.yaml or topology.conf beside it\n"
"      --partition NAME      the job's partition: its topology of\n"
"                            topology.yaml (default: the cluster default)\n"
"      --slurm-live[=FILE]   nodes Slurm's files do not place (dynamic\n"
"                            nodes) take the place slurmctld gives them:\n"
"                            'scontrol show topology' (15 s at most), or\n"
"                            FILE, its saved output\n"
"      --slurm-version X.Y   with --slurm-conf: the baseline is the layout\n"
"                            Slurm X.Y itself takes with this slurm.conf\n"
"                            (26.05 on: block by the topology's ranks);\n"
"                            without it, --nodes' order\n"
"      --distribution D      srun's -m: block, cyclic, plane=N, arbitrary\n"
"                            (default: srun's, cyclic for no more tasks\n"
"                            than nodes, else block): the baseline\n"
"\n"
"Options:\n"
"  -p, --policy NAME         auto (default unless the config says\n"
"                            otherwise), geometric, graph, hierarchical,\n"
"                            modcolor, zorder, cyclic, random, block, none\n"
"  -m, --metric NAME         hop-bytes or congestion (scores the search)\n"
"  -f, --format FMT          hostfile (default): one node per rank;\n"
"                            json: the report; rankfile: Open MPI's\n"
"                            (rank 0=node slot=0:0-3, for mpirun\n"
"                            --rankfile); mpich: Hydra's host file\n"
"                            (node:count, for mpiexec -f); tasks: each\n"
"                            rank's node, CPUs and GPUs (rank 0=node\n"
"                            cpus=0-3 gpus=0; needs node models); svg:\n"
"                            a picture, Slurm's block order and\n"
"                            topoplace's mapping on the network\n"
"      --node NAME           with --format svg: picture the inside of node\n"
"                            NAME instead, with the CPUs and GPUs chosen for\n"
"                            its tasks (needs the node's hwloc XML)\n"
"  -t, --time-budget MS      bound the whole placement's time (0: no limit)\n"
"      --seed N              seed of the random policy\n"
"  -o, --output FILE         write to FILE (atomically) instead of stdout\n"
"      --search MODE         auto (default), full, rotations or none\n"
"      --parts-per-level K   2 = recursive bisection, more = multi-jagged\n"
"      --threads N           at most N threads for the search and the\n"
"                            refinement (default: one per CPU it may run\n"
"                            on; MaxThreads= of the config holds both)\n"
"      --compare             print block, zorder and the chosen policy's\n"
"                            metrics on stderr\n"
"      --explain             print the candidates tried, their scores and\n"
"                            times, and the verdict on stderr\n"
"\n"
"Inside the nodes (MAGC phases 2 and 3):\n"
"      --node-topology FILE  hwloc XML of the nodes: adds per-task CPU sets\n"
"                            (sockets chosen to minimise the largest\n"
"                            inter-socket message)\n"
"      --gpu-matrix FILE     GPU traffic between tasks (JSON {\"tasks\": N,\n"
"                            \"traffic\": [[i, j, bytes], ...]} or CSV i,j,bytes);\n"
"                            a pattern alone or added to the stencil or\n"
"                            graph; with node models, GPUs chosen by the\n"
"                            max-congestion greedy\n"
"      --gpu-links FILE      NVLink or xGMI counts: gres.conf Links= lines,\n"
"                            the output of nvidia-smi topo -m, or (AMD)\n"
"                            of amd-smi topology [--json] or rocm-smi\n"
"                            --showtopo --shownodesbw\n"
"      --gpus-per-task N     GPUs per task (default: an equal share of the\n"
"                            node's GPUs)\n"
"      --gpu-select ALGO     magc (default), local-rank, closest or bisect\n"
"  -h, --help                show this help\n"
"\n"
"Every policy is held to Slurm's block order: a result that scores worse\n"
"under the metric keeps Slurm's order, and a note says why.  auto: block,\n"
"geometric (with coordinates), zorder, greedy and bipartition; on switch\n"
"trees, dragonflies and block networks also hierarchical and hier-coords\n"
"(its splits made by the task coordinates), and modcolor on dragonflies;\n"
"scored by the metric, the best refined (and block too when close).\n"
"Slurm's order stays unless the best beats it by 0.5 %.  geometric needs\n"
"task coordinates; for a graph without them graph mapping is used and a\n"
"note says so.  graph: the better of greedy growth and recursive\n"
"bipartitioning, swap-refined.  The time budget keeps the best so\n"
"far.  See topoplace(1).\n";

static const char help_eval[] =
"usage: topoplace eval --config FILE --nodes HOSTLIST --hostfile FILE\n"
"                      (--stencil SPEC | --graph FILE | --parallel SPEC)\n"
"                      [OPTIONS]\n"
"\n"
"Score an existing hostfile (one node per rank) and Slurm's block order with\n"
"the same number of tasks on every node.\n"
"\n"
"  -c, --config FILE         topoplace.conf describing the network\n"
"  -w, --nodes HOSTLIST      the job's nodes in Slurm's order (@FILE: from FILE)\n"
"  -H, --hostfile FILE       the mapping to score\n"
"  -s, --stencil SPEC        stencil pattern\n"
"  -g, --graph FILE          JSON communication graph\n"
"      --parallel SPEC       a training job's layout (as for map); NCCL's\n"
"                            rings follow each order scored\n"
"  -N, --tasks-per-node N|SPEC\n"
"                            slots per node; the hostfile may not exceed\n"
"                            them (default: the counts the hostfile uses)\n"
"  -f, --format FMT          text (default) or json\n"
"      --slurm-conf FILE     Slurm's slurm.conf (default $SLURM_CONF): the\n"
"                            network of a config without Network=\n"
"      --partition NAME      the job's partition (its topology.yaml topology)\n"
"      --slurm-version X.Y   with --slurm-conf: Slurm's order is the one\n"
"                            Slurm X.Y takes with this slurm.conf\n"
"  -h, --help                show this help\n";

static const char help_check[] =
"usage: topoplace check-config [--slurm-conf SLURM_CONF] [--partition P] FILE\n"
"\n"
"Load and validate a topoplace.conf and read every file it names\n"
"(TopologyFile=, CoordFile=, NodeTopology=, GpuLinks=) as a job would.  On\n"
"success print a summary of the network and exit 0; otherwise print each\n"
"error (with file and line) and exit 2.  What Slurm accepts with a warning\n"
"in a topology.conf (a forest, a node under two leaf switches) is printed\n"
"as \"topoplace: warning: ...\" on stderr.\n"
"\n"
"A config without Network= (or with Network=slurm) takes Slurm's own\n"
"topology, found as slurmctld finds it: topology.yaml beside slurm.conf,\n"
"else topology.conf under TopologyPlugin=.  check-config then prints the\n"
"file used and why, each topology with its partitions, the one used, what\n"
"FILE adds, and builds every other topology of topology.yaml too.\n"
"\n"
"  --partition P            the topology of partition P (default: the\n"
"                           default partition's, else the cluster default)\n"
"  --slurm-conf SLURM_CONF  Slurm's topology from beside this slurm.conf\n"
"                           (default $SLURM_CONF, else /etc/slurm/slurm.conf);\n"
"                           also compare the nodes of slurm.conf (NodeName=\n"
"                           lines, Include files) with FILE's: list those\n"
"                           only one of them has; exit 2 when slurm.conf has\n"
"                           nodes FILE lacks (their jobs keep Slurm's\n"
"                           placement)\n";

static const char help_node[] =
"usage: topoplace node-info [--format text|svg] [-o FILE] [FILE [LINKS]]\n"
"\n"
"Load a node's hwloc XML (FILE; this machine when none) and optionally its\n"
"NVLink or xGMI counts (LINKS: gres.conf Links= lines, nvidia-smi topo -m\n"
"output, amd-smi topology [--json] output, or rocm-smi --showtopo\n"
"--shownodesbw output), then print the sockets, the PCIe tree with link\n"
"bandwidths, the NVLink or xGMI links and the GPU path matrix (as\n"
"nvidia-smi topo -m).  Exit 2 on a file that does not load.\n"
"\n"
"  -f, --format FMT   text (default) or svg: a picture of the sockets,\n"
"                     cores, PCIe tree, GPUs, NVLinks and network cards\n"
"  -o, --output FILE  write the picture to FILE (atomically)\n"
"\n"
"The same picture with a job's tasks on it: topoplace map ... --format svg\n"
"--node NAME.\n";

static const char help_bind[] =
"usage: topoplace bind [-v] [--] PROGRAM [ARGS...]\n"
"\n"
"Run by each MPI rank before the program (mpirun topoplace bind -- ./app):\n"
"give the rank the CPUs and GPUs topoplace chooses for it inside its node,\n"
"as the SPANK plugin does for srun's tasks, then exec PROGRAM.  It reads\n"
"its rank (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID), the\n"
"job's placement (TOPOPLACE_HOSTFILE, else SLURM_HOSTFILE), the job's\n"
"--topo-* options from the environment sbatch leaves, TOPOPLACE_CONF\n"
"(default /etc/slurm/topoplace.conf), the CPUs its launcher may use and\n"
"the node's GPUs (SLURM_STEP_GPUS, SLURM_JOB_GPUS, CUDA_VISIBLE_DEVICES).\n"
"Sets the CPU affinity, TOPOPLACE_CPUS and CUDA_VISIBLE_DEVICES.  A rank\n"
"takes its launcher's local rank's share of its node\n"
"(OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, PMIX_LOCAL_RANK, a Slurm\n"
"task's SLURM_LOCALID), so a launcher that did not follow the placement\n"
"(plain mpirun) still gives each rank of a node its own CPUs and GPUs; one\n"
"line says so.  Any problem: one line on stderr, and PROGRAM runs unbound.\n"
"\n"
"  -v, --verbose   one line per rank: what it got\n"
"\n"
"Exit status: PROGRAM's; 127 when it cannot be run, 2 on a usage error.\n";

static const char help_help[] =
"usage: topoplace help [COMMAND]\n"
"\n"
"Show the general help, or the help of COMMAND (map, eval, check-config,\n"
"node-info, bind).\n";

bool cli_help(const char *cmd, FILE *f)
{
	const char *text = NULL;
	if (!cmd)
		text = help_general;
	else if (!strcmp(cmd, "map"))
		text = help_map;
	else if (!strcmp(cmd, "eval"))
		text = help_eval;
	else if (!strcmp(cmd, "node-info"))
		text = help_node;
	else if (!strcmp(cmd, "check-config"))
		text = help_check;
	else if (!strcmp(cmd, "help"))
		text = help_help;
	else if (!strcmp(cmd, "bind"))
		text = help_bind;
	if (!text)
		return false;
	fputs(text, f);
	return true;
}
