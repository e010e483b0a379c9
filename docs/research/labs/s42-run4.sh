#!/bin/bash
# Session 42, run 4: the overlapped state pass issuing its first two stages' inputs (k, q, v) at once, before their
# prep items' flags, and the prep's T, P, scalars after them on the same barrier (s42-state-pass-inputs-early.patch,
# ei = -DGDN_LAB_EI=1, on m42 = 1e26cb7's build): is the B=1 fill shorter by the v tile's trip to HBM?
set -u
L=/tmp/L; mkdir -p $L; for x in m42 ei; do tar -C $L -xJf .cubin/$x.txz; done
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
S=$SECONDS
echo "== ei test_cuda rs: $(timeout 100 $L/ei/test_cuda rs 2>&1 | tail -n 1); overlap 2: $(GDN_CUDA_PREP_OVERLAP=2 timeout 100 $L/ei/test_cuda rs 2>&1 | tail -n 1)"
for c in "1 512" "1 2048" "1 4096" "1 32768"; do
  r=""; for x in 1 2 3; do for l in m42 ei; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $c --chunked 2>&1 | med)"; done; r="$r |"; done
  echo "bench_cuda B,T=$c (m42 ei): $r"; done
gb() { local j; j=$(timeout 90 "$L/$1/gdn" bench --backend cuda --json --algo chunked --B 1 --T $2 2>/dev/null); echo "$(echo "$j" | f median_us)/$(echo "$j" | f rel_err)"; }
for r in 1 2; do for T in 512 4096; do echo "gdn bench r$r B=1 T=$T (m42 ei): $(gb m42 $T) $(gb ei $T)"; done; done
echo "done at $((SECONDS-S)) s"
