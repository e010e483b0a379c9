#!/bin/bash
# Session 34 (device; carry .cubin with main.txz = the tree's build/gdn, tests/test_cuda, tests/bench_cuda; base, bw, pt
# from lab_build.sh): the test fix under GDN_CUDA_PREP_OVERLAP=0, and the end read wait (bw) and prefetched tensor maps (pt).
set -u
L=/tmp/L; mkdir -p $L; for l in main base bw pt; do tar -C $L -xJf .cubin/$l.txz; done; M=$L/main
for v in "" "GDN_CUDA_PREP_OVERLAP=0"; do echo "== main test_cuda rs $v"
  env $v timeout 60 $M/test_cuda rs > $OUT/rs.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS|overlapped" $OUT/rs.log | tail -4; done
for l in bw pt; do echo "== $l test_cuda rs"; timeout 60 $L/$l/test_cuda rs > $OUT/${l}_rs.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/${l}_rs.log | tail -2; done
b() { timeout 60 $L/$1/gdn bench --backend cuda --algo chunked --B $2 --T $3 2>&1 | awk '/^prefill/ {print $4, $10}'; }
for c in "1 512" "1 4096" "1 32768"; do set -- $c
  echo "gdn bench B=$1 T=$2: base $(b base $1 $2) | bw $(b bw $1 $2) | pt $(b pt $1 $2) | base $(b base $1 $2) | bw $(b bw $1 $2) | pt $(b pt $1 $2)"; done
for c in "1 512" "1 4096"; do set -- $c
  r=""; for l in base bw pt base bw pt; do r="$r $(timeout 60 $L/$l/bench_cuda --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
  echo "bench_cuda B=$1 T=$2 (base bw pt base bw pt): $r"; done
