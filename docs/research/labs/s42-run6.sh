#!/bin/bash
# Session 42, run 6: the state pass's flag polls pipelined (fp = -DGDN_LAB_FP=1) and its flags' lines prefetched into
# L2 at its start (fl = -DGDN_LAB_FL=1), both from s42-flag-labs.patch on m43 = 66c1e16's build.
set -u
L=/tmp/L; mkdir -p $L; for x in m43 fp fl; do tar -C $L -xJf .cubin/$x.txz; done
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
for l in fp fl; do echo "== $l test_cuda rs: $(timeout 100 $L/$l/test_cuda rs 2>&1 | tail -n 1)"; done
for c in "1 512" "1 4096" "1 32768"; do
  r=""; for x in 1 2; do for l in m43 fp fl; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $c --chunked 2>&1 | med)"; done; r="$r |"; done
  echo "bench_cuda B,T=$c (m43 fp fl): $r"; done
