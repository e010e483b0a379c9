#!/bin/bash
# Session 34 (device; carry .cubin): the early wait (ew = lab_build.sh ew s34-state-pass-early-wait.patch -DGDN_LAB_EW=1)
# against base: rs (and rs with GDN_CUDA_PREP_OVERLAP=0, whose one FAIL is the test asserting no overlap was asked for), gdn bench, bench_cuda, quick.
set -u
L=/tmp/L; mkdir -p $L; for l in base ew; do tar -C $L -xJf .cubin/$l.txz; done
echo "== ew test_cuda rs"; timeout 100 $L/ew/test_cuda rs > $OUT/ew_rs.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/ew_rs.log | tail -3
echo "== ew test_cuda rs OVERLAP=0"; GDN_CUDA_PREP_OVERLAP=0 timeout 100 $L/ew/test_cuda rs > $OUT/ew_rs0.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/ew_rs0.log | tail -3
b() { timeout 60 $L/$1/gdn bench --backend cuda --algo chunked --B $2 --T $3 2>&1 | awk '/^prefill/ {print $4, $10}'; }
for c in "1 256" "1 512" "1 1024" "1 4096" "8 4096" "64 4096"; do set -- $c
  echo "gdn bench B=$1 T=$2: base $(b base $1 $2) | ew $(b ew $1 $2) | base $(b base $1 $2) | ew $(b ew $1 $2)"; done
for c in "1 256" "1 512" "1 1024" "8 4096" "64 4096"; do set -- $c
  r=""; for l in base ew base ew; do r="$r $(timeout 60 $L/$l/bench_cuda --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
  echo "bench_cuda B=$1 T=$2 (base ew base ew): $r"; done
echo "== ew test_cuda quick"; timeout 300 $L/ew/test_cuda quick > $OUT/ew_quick.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/ew_quick.log | tail -3
