#!/bin/bash
# session 35: the state pass's early launch in stream order (GDN_CUDA_SPLIT_EARLY 1 vs 0), same binary
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/early.txz; E=$L/early  # early.txz: gdn, bench_cuda, test_cuda of a Release build of the tree with s35-split-early.patch
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw --format=csv > $OUT/smi.txt 2>&1
for m in 1 0; do echo "== test_cuda rs SPLIT_EARLY=$m"; GDN_CUDA_SPLIT_EARLY=$m timeout 120 $E/test_cuda rs > $OUT/rs_$m.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/rs_$m.log | tail -2; done
for c in "1 512" "1 1024" "2 512" "4 512" "8 512" "1 256" "1 4096" "8 4096" "64 4096"; do set -- $c
  r=""; for m in 1 0 1 0; do r="$r | $(GDN_CUDA_SPLIT_EARLY=$m timeout 60 $E/gdn bench --backend cuda --algo chunked --B $1 --T $2 2>&1 | awk '/^prefill/ {print $4, $10}')"; done
  echo "gdn bench B=$1 T=$2 (early 1 0 1 0): $r"; done
for c in "1 512" "1 1024" "2 512"; do set -- $c
  r=""; for m in 1 0 1 0; do r="$r $(GDN_CUDA_SPLIT_EARLY=$m timeout 60 $E/bench_cuda --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
  echo "bench_cuda B=$1 T=$2 (early 1 0 1 0): $r"; done
echo "== test_cuda quick"; timeout 300 $E/test_cuda quick > $OUT/quick.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/quick.log | tail -3
