#!/bin/bash
cd /work/main
out=$1; rounds=$2; shift 2
qemu/cluster --name sab up -n 2 --boot direct --mem 256M --tcg >/dev/null 2>&1
for r in $(seq $rounds); do
for pm in "$@"; do
  echo "== push_max=$pm round $r load $(cut -d' ' -f1 /proc/loadavg)" >> $out
  qemu/cluster --name sab exec env TERN_MPI_STATS=1 TERN_MPI_PUSH_MAX=$pm build/bin/yod -sz 2 build/mpi-tern/mpibench stream 3 8388608 262144,1048576 2>&1 | grep -E "^R|stats node 0" >> $out
  qemu/cluster --name sab exec env TERN_NX_STATS=1 TERN_NX_PUSH_MAX=$pm build/bin/yod -sz 2 build/nx-tern/nxbench stream 3 8388608 262144,1048576 2>&1 | grep -E "^R|stats node 0" >> $out
done
done
qemu/cluster --name sab down >/dev/null 2>&1
