#!/bin/bash
# session 35: verify at J=2 with both tiles loaded before the staging (s28-pairs-two-tiles-early.patch at GDN_CUDA_FAST_J=2)
L=/tmp/L; mkdir -p $L; for l in base early1; do tar -C $L -xJf .cubin/$l.txz; done
echo "== early1 test_cuda quick (J default)"; timeout 200 $L/early1/test_cuda quick > $OUT/e1_quick.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/e1_quick.log | tail -2
echo "== early1 test_cuda quick GDN_CUDA_FAST_J=2"; GDN_CUDA_FAST_J=2 timeout 200 $L/early1/test_cuda quick > $OUT/e1_quick_j2.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/e1_quick_j2.log | tail -2
for c in "64 4" "256 4" "32 4" "16 4" "64 2" "64 8" "64 1"; do set -- $c
  r=""; for rep in 1 2; do for l in base early1; do for j in 0 2; do
    if [ $j = 0 ]; then v=$(timeout 60 $L/$l/bench_cuda --one $1 $2 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")
    else v=$(GDN_CUDA_FAST_J=$j timeout 60 $L/$l/bench_cuda --one $1 $2 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"); fi
    r="$r $v"; done; done; r="$r |"; done
  echo "bench_cuda B=$1 T=$2 (base J=def, base J=2, early1 J=def, early1 J=2; twice): $r"; done
timeout 60 $L/base/bench_cuda --one 64 4 > $OUT/one_64_4.txt 2>&1
