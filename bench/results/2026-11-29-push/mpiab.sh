#!/bin/bash
# usage: pushab.sh OUT ROUNDS NODES PM...: alternates TERN_NX_PUSH_MAX values on one cluster
cd /work/main
out=$1; rounds=$2; n=$3; shift 3
qemu/cluster --name mab up -n $n --boot direct --mem 256M --tcg >/dev/null 2>&1
for r in $(seq $rounds); do
for pm in "$@"; do
  e="TERN_MPI_STATS=1 TERN_MPI_PUSH_MAX=$pm"
  echo "== push_max=$pm round $r load $(cut -d' ' -f1 /proc/loadavg)" >> $out
  qemu/cluster --name mab exec env $e build/bin/yod -sz $n build/mpi-tern/mpibench ring 3 8388608 262144,1048576,8388608 2>&1 | grep -E "^R|stats node 0" >> $out
  if [ $n = 2 ]; then
  qemu/cluster --name mab exec env $e build/bin/yod -sz 2 build/mpi-tern/mpibench lat 3 20 262144,1048576 200 2>&1 | grep -E "^R|stats node 0" >> $out
  qemu/cluster --name mab exec env $e build/bin/yod -sz 2 build/mpi-tern/mpibench stream 3 8388608 1048576 2>&1 | grep -E "^R|stats node 0" >> $out
  fi
done
done
qemu/cluster --name mab down >/dev/null 2>&1
