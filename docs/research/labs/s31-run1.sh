#!/bin/bash
# Session 31, first device command: the scaled state (s31-state-pass-scaled-state.patch, with the producer's
# rescale of chunk c - 1 before its flag wait for chunk c: no gl S in the compute warps) against base (HEAD's
# kernels), both built by lab_build.sh (sg from the patched tree). Run; results in docs/PERF.md, session 31.
# Pack: for l in base sg; do mkdir -p /tmp/pk/$l && cp /tmp/labs/$l/{gdn,bench_cuda,test_cuda} /tmp/pk/$l/ &&
#   tar -C /tmp/pk -cJf .cubin/$l.txz $l; done     Run (carry .cubin): bash docs/research/labs/s31-run1.sh
set -u
L=/tmp/L; mkdir -p "$L"; for l in base sg; do tar -C "$L" -xJf .cubin/$l.txz; done
X=$L/sg
echo "== sg test_cuda rs"; timeout 60 $X/test_cuda rs > "$OUT/sg_rs.log" 2>&1; echo "rc=$?"
grep -E "rel RMS|FAIL|^PASS" "$OUT/sg_rs.log" | tail -9
echo "== bench_cuda --one B T --chunked: base sg, three rounds"
for c in "1 512" "1 4096" "1 32768" "8 4096" "64 4096"; do set -- $c
  r=""; for l in base sg base sg base sg; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
  echo "B=$1 T=$2: $r"; done
echo "== gdn bench: base / sg / base bf16 / sg bf16 (median, rel_err)"
for c in "1 512" "1 4096" "1 32768" "8 4096"; do
  r=""; for s in "base" "sg" "base --precision bf16" "sg --precision bf16"; do set -- $c $s; B=$1 T=$2 l=$3; shift 3
    r="$r | $(timeout 60 "$L/$l/gdn" bench --backend cuda --algo chunked --B $B --T $T "$@" 2>&1 | awk '/^prefill/ {print $4, $10}')"; done
  echo "$c: $r"; done
echo "== sg quick"; timeout 130 $X/test_cuda quick > "$OUT/sg_quick.log" 2>&1; echo "rc=$?"; grep -E "FAIL|^PASS" "$OUT/sg_quick.log" | tail -5
echo "== sg memcheck rs"; timeout 60 compute-sanitizer --tool memcheck $X/test_cuda rs > "$OUT/sg_mc.log" 2>&1; echo "rc=$?"
grep -E "ERROR SUMMARY|FAIL|^PASS" "$OUT/sg_mc.log" | tail -3
echo "== sg racecheck rs"; timeout 100 compute-sanitizer --tool racecheck $X/test_cuda rs > "$OUT/sg_rc.log" 2>&1; echo "rc=$?"
grep -E "RACECHECK SUMMARY|hazard|FAIL|^PASS" "$OUT/sg_rc.log" | tail -3
