#!/bin/sh
# Writes the node models the amd-smi outputs of this folder are checked
# against: conf/examples/nodes/mi250x.xml (one package, 4 NUMA domains, 8
# AMD GPUs on their own host bridges, a NIC beside every second one) with
# its 8 GCD bus ids (and the NICs' buses after them) moved to those the
# real MI300X and MI355X outputs list, the device id set to the real
# card's, and hwloc's XGMIPeers dropped: the links come from the amd-smi
# file alone.  Only the GPU bus ids are real; the rest is the MI250X
# example's (a stand-in, not a dump of those machines).
#   sh tests/data/nodes/real/make-models.sh   (from the repository root)
set -e
src=conf/examples/nodes/mi250x.xml
out=tests/data/nodes/real
# model NAME DEVICE-ID MODEL GPU-BUS:NIC-BUS ... (in the order c1 c6 c9 ce d1 d6 d9 de)
model() {
	name=$1 dev=$2 model=$3; shift 3
	# MI300 and MI355X are processing accelerators (class 1200)
	e="/XGMIPeers/d; s/0380 \[1002:740c\]/1200 [1002:$dev]/g"
	e="$e; s/AMD Instinct MI250X/$model/"
	for old in c1:c2 c6:c7 c9:ca ce:cf d1:d2 d6:d7 d9:da de:df; do
		new=$1; shift
		og=${old%:*} on=${old#*:} ng=${new%:*} nn=${new#*:}
		# '@' marks a new number, which a later old one must not match
		e="$e; s/0000:$og:/0000:@$ng:/g; s/0000:$on:/0000:@$nn:/g"
		e="$e; s/\[$og-$on\]/[@$ng-@$nn]/g; s/\[$og-$og\]/[@$ng-@$ng]/g"
		e="$e; s/\[$on-$on\]/[@$nn-@$nn]/g"
	done
	e="$e; s/@//g"
	sed -e "$e" -e "3,/-->/c\\
<!-- topoplace test node $name, written by make-models.sh from the example\\
     mi250x.xml: 8 $model at the PCI bus ids of the real amd-smi\\
     output $name-amd-smi-topology.txt; CPUs, NUMA domains, bridges and\\
     NICs are the MI250X example's, not those of such a machine; no\\
     XGMIPeers: the xGMI links come from the amd-smi file. -->" \
		"$src" >"$out/$name.xml"
}
model mi300x 74a1 "AMD Instinct MI300X" 0c:0d 22:23 38:39 5c:5d 9f:a0 af:b0 bf:c0 df:e0
model mi355x 75a3 "AMD Instinct MI355X" 0d:0e 26:27 5d:5e 75:76 8e:8f a7:a8 dc:dd f4:f5
