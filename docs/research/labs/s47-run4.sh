#!/bin/bash
# Session 47 run 4: m58 = the tree with the pairs kernel's grid rule above T=5 (persistent at T=6, contiguous tile
# ranges from T=7 where the heads are at least twice the resident CTAs; fast_pairs_kernel<..., RANGE>), against m57
# (0040245). m58 checked: rs, quick (its T=6 / T=8 B=64 cases print their grids), quick and memcheck with every D = 128
# pairs call on the range grid (GDN_CUDA_FAST=1 GDN_CUDA_FAST_LPR=4); then gdn bench, two rounds. Carry .cubin.
set -u
L=/tmp/L; mkdir -p $L; for x in m57 m58; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
one() { local b=$1 B=$2 T=$3 j; shift 3; j=$(env "$@" timeout 60 $L/$b/gdn bench --backend cuda --json --B $B --T $T 2>&1)
  echo -n " $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || echo -n "(NOT OK)"; }
row() { local B=$1 T=$2 x; echo -n "B=$B T=$T (m57 | m58):"
  for x in 1 2; do one m57 $B $T X=0; one m58 $B $T X=0; echo -n " |"; done; echo; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== m58 rs: $(timeout 120 $L/m58/test_cuda rs 2>&1 | tail -n 1)"
timeout 150 $L/m58/test_cuda quick > $OUT/quick.log 2>&1; echo "== m58 quick: $(tail -n 1 $OUT/quick.log)"
grep -E "drain|grid \(" $OUT/quick.log
F="GDN_CUDA_FAST=1 GDN_CUDA_FAST_LPR=4"
echo "== m58 quick, LPR=4: $(env $F timeout 150 $L/m58/test_cuda quick 2>&1 | grep -E 'FAIL|PASS' | tail -n 3)"
echo "== m58 memcheck sanitize, LPR=4: $(env $F timeout 150 compute-sanitizer --tool memcheck $L/m58/test_cuda sanitize 2>&1 | grep -E 'ERROR SUMMARY|PASS|FAIL' | tail -n 3)"
row 64 4; row 256 4; row 64 8; row 128 8; row 256 8; row 32 8; row 64 7; row 256 7; row 64 6; row 256 6; row 64 5; row 128 4
for BT in "1 1" "64 1" "1 4"; do set -- $BT; row $1 $2; done
) 2>&1 | tee $OUT/run4.log
