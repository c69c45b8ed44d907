#!/bin/bash
# usage: [LAYER=mpi] pushab.sh OUT ROUNDS NODES PM...: on one cluster, jobs alternating
# TERN_NX_PUSH_MAX (TERN_MPI_PUSH_MAX, mpibench, with LAYER=mpi) over the values PM
cd /work/main
out=$1; rounds=$2; n=$3; shift 3
if [ "$LAYER" = mpi ]; then var=TERN_MPI; prog=build/mpi-tern/mpibench; else var=TERN_NX; prog=build/nx-tern/nxbench; fi
qemu/cluster --name pab up -n $n --boot direct --mem 256M --tcg >/dev/null 2>&1
for r in $(seq $rounds); do
for pm in "$@"; do
  e="${var}_STATS=1 ${var}_PUSH_MAX=$pm"
  echo "== push_max=$pm round $r load $(cut -d' ' -f1 /proc/loadavg)" >> $out
  qemu/cluster --name pab exec env $e build/bin/yod -sz $n $prog ring 3 8388608 262144,1048576,8388608 2>&1 | grep -E "^R|stats node 0" >> $out
  if [ $n = 2 ]; then
  qemu/cluster --name pab exec env $e build/bin/yod -sz 2 $prog lat 3 20 262144,1048576 200 2>&1 | grep -E "^R|stats node 0" >> $out
  qemu/cluster --name pab exec env $e build/bin/yod -sz 2 $prog stream 3 8388608 1048576 2>&1 | grep -E "^R|stats node 0" >> $out
  fi
done
done
qemu/cluster --name pab down >/dev/null 2>&1
