#!/bin/bash
# Session 33, run 2 (device; carry .cubin): wgp = the prep's products K K^T and Q K^T on wgmma (m64n64k16, a
# warpgroup each, the rows in the core layout, Q's tiles reversed) with the rows' norms by all 256 threads while
# the products run; against base (3112313's kernels). wgp's checks (rs, quick, memcheck rs, racecheck rs), times.
# Builds: lab_build.sh base "" "" (from 3112313's tree); lab_build.sh wgp "" "" (the working tree), packed as
# mkdir -p /tmp/pk/N && cp /tmp/labs/N/{gdn,bench_cuda,test_cuda} /tmp/pk/N/ && tar -C /tmp/pk -cJf .cubin/N.txz N.
set -u
L=/tmp/L; mkdir -p "$L"; for l in base wgp; do tar -C "$L" -xJf .cubin/$l.txz; done
echo "== wgp test_cuda rs"; timeout 60 $L/wgp/test_cuda rs > "$OUT/wgp_rs.log" 2>&1; echo "rc=$?"
grep -E "FAIL|^PASS" "$OUT/wgp_rs.log" | tail -3; grep "T=4096" "$OUT/wgp_rs.log" | head -4
echo "== bench_cuda --one B T --chunked: base wgp, three rounds"
for c in "1 512" "1 1024" "1 4096" "1 32768" "8 4096" "64 4096"; do set -- $c
  r=""; for l in base wgp base wgp base wgp; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
  echo "B=$1 T=$2: $r"; done
echo "== gdn bench: base / wgp (median, rel_err)"
for c in "1 512" "1 4096" "1 32768" "64 4096"; do
  r=""; for l in base wgp; do set -- $c
    r="$r | $(timeout 60 "$L/$l/gdn" bench --backend cuda --algo chunked --B $1 --T $2 2>&1 | awk '/^prefill/ {print $4, $10}')"; done
  echo "$c: $r"; done
echo "== wgp quick"; timeout 130 $L/wgp/test_cuda quick > "$OUT/wgp_quick.log" 2>&1; echo "rc=$?"
grep -E "FAIL|^PASS" "$OUT/wgp_quick.log" | tail -3
echo "== wgp memcheck rs"; timeout 90 compute-sanitizer --tool memcheck $L/wgp/test_cuda rs > "$OUT/wgp_mc.log" 2>&1
echo "rc=$?"; grep -E "ERROR SUMMARY|^PASS" "$OUT/wgp_mc.log" | tail -2
echo "== wgp racecheck rs"; timeout 120 compute-sanitizer --tool racecheck $L/wgp/test_cuda rs > "$OUT/wgp_rc.log" 2>&1
echo "rc=$?"; grep -E "RACECHECK SUMMARY|^PASS" "$OUT/wgp_rc.log" | tail -2
