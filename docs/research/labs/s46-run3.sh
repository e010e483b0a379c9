#!/bin/bash
# Session 46, run 3. ld = s46-pairs-setup-lsu.patch on 1fe00de (GDN_LAB_LD=0 is main's kernel): the pairs kernel's
# inputs by per-thread cp.async (1), its tile-0 prefetch by per-lane prefetch instructions (2), both (3); gdn bench
# verify, two rounds, with the drain rule's K at the rule and at 96; then checks. Carry .cubin (ld .txz).
set -u
L=/tmp/L; mkdir -p $L; for x in ld; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { local bin=$1 var=$2 B=$3 T=$4 r="" x k j; shift 4; for x in 1 2; do for k in "$@"; do
    j=$(env GDN_CUDA_FAST_TAIL=${TAIL:--1} $var=$k timeout 60 $L/$bin/gdn bench --backend cuda --json --B $B --T $T 2>&1)
    r="$r $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "$bin gdn bench B=$B T=$T (TAIL=${TAIL:--1}; $var = $*): $r"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
for B in 64 256 128 32 16 8 1; do row ld GDN_LAB_LD $B 4 0 1 2 3; done
row ld GDN_LAB_LD 64 8 0 1 2 3
row ld GDN_LAB_LD 64 2 0 1 2 3
TAIL=96 row ld GDN_LAB_LD 64 4 0 1 2 3
TAIL=96 row ld GDN_LAB_LD 256 4 0 1 2 3
row ld GDN_LAB_LD 1 1 0 3
row ld GDN_LAB_LD 64 1 0 3
echo "== ld rs, GDN_LAB_LD=3: $(GDN_LAB_LD=3 timeout 120 $L/ld/test_cuda rs 2>&1 | tail -n 1)"
echo "== ld sanitize (not under a sanitizer), persistent pairs grid, GDN_LAB_LD=3: $(GDN_LAB_LD=3 GDN_CUDA_FAST_LPR=3 timeout 120 $L/ld/test_cuda sanitize 2>&1 | tail -n 1)"
echo "== ld quick, pairs + tail forced, GDN_LAB_LD=3: $(GDN_LAB_LD=3 GDN_CUDA_FAST_LPR=2 GDN_CUDA_FAST_TAIL=3 timeout 150 $L/ld/test_cuda quick 2>&1 | tail -n 1)"
) 2>&1 | tee $OUT/run3.log
