#!/bin/bash
# Session 31's labs for the next session (s31-state-pass-cf-and-fence.patch on a0c7e8a), built, not run: from the
# ncu source counters (docs/PERF.md session 31): cf = the two-stage kernel loads cf once Y^T is issued
# (-DGDN_LAB_CF=1; cf D^T's loads waited 6% of the chunk's samples); lf = the outputs' proxy fence and ofull
# arrival moved to the next chunk's top (-DGDN_LAB_LF=1; the fence waited for the stmatrix, 4%); cflf = both;
# sb = sk and bt loaded with V^T before X^T is issued (-DGDN_LAB_SB=1).
# Build (a Release build of the tree in build/, then about 4 minutes each, two at once):
#   docs/research/labs/lab_build.sh base "" ""
#   docs/research/labs/lab_build.sh cf s31-state-pass-cf-and-fence.patch -DGDN_LAB_CF=1
#   docs/research/labs/lab_build.sh lf s31-state-pass-cf-and-fence.patch -DGDN_LAB_LF=1
#   docs/research/labs/lab_build.sh cflf s31-state-pass-cf-and-fence.patch "-DGDN_LAB_CF=1 -DGDN_LAB_LF=1"
#   docs/research/labs/lab_build.sh sb s31-state-pass-cf-and-fence.patch -DGDN_LAB_SB=1
#   for l in base cf lf cflf sb; do mkdir -p /tmp/pk/$l && cp /tmp/labs/$l/{gdn,bench_cuda,test_cuda} /tmp/pk/$l/ &&
#       tar -C /tmp/pk -cJf .cubin/$l.txz $l; done
# Then on the device (carry .cubin): bash docs/research/labs/s31-next-run.sh   (about 6 minutes; logs under $OUT)
set -u
L=/tmp/L; mkdir -p "$L"; for l in base cf lf cflf sb; do tar -C "$L" -xJf .cubin/$l.txz; done
for l in cf lf cflf sb; do echo "== $l test_cuda rs"; timeout 60 $L/$l/test_cuda rs > "$OUT/${l}_rs.log" 2>&1; echo "rc=$?"
  grep -E "FAIL|^PASS" "$OUT/${l}_rs.log" | tail -3; done
echo "== bench_cuda --one B T --chunked: base cf lf cflf sb, two rounds"
for c in "1 512" "1 4096" "1 32768"; do set -- $c
  r=""; for l in base cf lf cflf sb base cf lf cflf sb; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
  echo "B=$1 T=$2: $r"; done
echo "== GDN_CUDA_PREP_OVERLAP=0 B=1 T=4096: base cf lf cflf sb"
r=""; for l in base cf lf cflf sb; do
  r="$r $(GDN_CUDA_PREP_OVERLAP=0 timeout 60 "$L/$l/bench_cuda" --one 1 4096 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
echo "$r"
echo "== gdn bench: base / cf / lf / cflf / sb (median, rel_err)"
for c in "1 512" "1 4096" "1 32768"; do
  r=""; for l in base cf lf cflf sb; do set -- $c
    r="$r | $(timeout 60 "$L/$l/gdn" bench --backend cuda --algo chunked --B $1 --T $2 2>&1 | awk '/^prefill/ {print $4, $10}')"; done
  echo "$c: $r"; done
echo "== cflf quick"; timeout 130 $L/cflf/test_cuda quick > "$OUT/cflf_quick.log" 2>&1; echo "rc=$?"
grep -E "FAIL|^PASS" "$OUT/cflf_quick.log" | tail -3
echo "== cflf memcheck rs"; timeout 60 compute-sanitizer --tool memcheck $L/cflf/test_cuda rs > "$OUT/cflf_mc.log" 2>&1
echo "rc=$?"; grep -E "ERROR SUMMARY|^PASS" "$OUT/cflf_mc.log" | tail -2
echo "== cflf racecheck rs"; timeout 110 compute-sanitizer --tool racecheck $L/cflf/test_cuda rs > "$OUT/cflf_rc.log" 2>&1
echo "rc=$?"; grep -E "RACECHECK SUMMARY|^PASS" "$OUT/cflf_rc.log" | tail -2
