#!/bin/bash
# usage: ternlat.sh ROOT NAME
R=$1; N=$2
C=$R/qemu/cluster
$C --name $N up -n 2 --boot direct >/dev/null 2>&1 || { echo up failed; exit 1; }
for i in 1 2 3; do
  $C --name $N exec yod -sz 2 $R/build/mpi-tern/mpibench lat 2 300 64,512,4096 200 | grep "^R" | sed "s/^/mpi /"
  $C --name $N exec yod -sz 2 $R/build/nx-tern/nxbench lat 2 300 64,512,4096 200 | grep "^R" | sed "s/^/nx /"
done
$C --name $N down >/dev/null 2>&1
