#!/bin/bash
# Session 47 run 2: rg = s47-pairs-range.patch built with -DGDN_LAB_RANGE (every D = 128 pairs call on a persistent
# grid whose CTAs walk contiguous tile ranges), m57 = main (0040245), also on its persistent grid (GDN_CUDA_FAST_LPR=3).
# rg checked (rs, memcheck on sanitize, quick), then gdn bench verify, two rounds. Carry .cubin (m57.txz, rg.txz).
set -u
L=/tmp/L; mkdir -p $L; for x in m57 rg; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
one() { local b=$1 B=$2 T=$3 j; shift 3; j=$(env "$@" timeout 60 $L/$b/gdn bench --backend cuda --json --B $B --T $T 2>&1)
  echo -n " $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || echo -n "(NOT OK)"; }
row() { local B=$1 T=$2 x; echo -n "B=$B T=$T (m57 | rg | m57 LPR=3):"
  for x in 1 2; do one m57 $B $T X=0; one rg $B $T X=0; one m57 $B $T GDN_CUDA_FAST_LPR=3; echo -n " |"; done; echo; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== rg rs: $(timeout 120 $L/rg/test_cuda rs 2>&1 | tail -n 1)"
echo "== rg memcheck sanitize: $(timeout 150 compute-sanitizer --tool memcheck $L/rg/test_cuda sanitize 2>&1 | grep -E 'ERROR SUMMARY|PASS|FAIL' | tail -n 3)"
row 64 4; row 128 4; row 256 4; row 64 8; row 64 3; row 96 4; row 32 4; row 8 4
echo "== rg quick: $(timeout 150 $L/rg/test_cuda quick 2>&1 | grep -E 'FAIL|PASS' | tail -n 3)"
) 2>&1 | tee $OUT/run2.log
