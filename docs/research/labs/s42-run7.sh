#!/bin/bash
# Session 42, run 7: the state pass's flag polls 300 ns (n3) and 1000 ns (n10) apart instead of 64
# (s42-flag-poll-period.patch, -DGDN_LAB_NS=X, on m43 = 66c1e16's build): run 6's fp polled faster and was slower.
set -u
L=/tmp/L; mkdir -p $L; for x in m43 n3 n10; do tar -C $L -xJf .cubin/$x.txz; done
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
for l in n3 n10; do echo "== $l test_cuda rs: $(timeout 100 $L/$l/test_cuda rs 2>&1 | tail -n 1)"; done
for c in "1 512" "1 4096" "1 32768"; do
  r=""; for x in 1 2; do for l in m43 n3 n10; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $c --chunked 2>&1 | med)"; done; r="$r |"; done
  echo "bench_cuda B,T=$c (m43 n3 n10): $r"; done
