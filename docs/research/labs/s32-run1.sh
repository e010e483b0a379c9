#!/bin/bash
# Session 32, run 1 (device; carry .cubin): the prep's solve by ldmatrix with the strip transposed (ls2 = the tree's
# s32 change: s32-prep-solve-ldmatrix.patch + s32-prep-publish-gen-once.patch), the publish without its generation
# read alone (pub), and ls2 with session 31's lf (ls2lf: -DGDN_LAB_LF=1 of s31-state-pass-cf-and-fence.patch);
# base = a0c7e8a's kernels (b4dc48f's object is the same). Logs under $OUT.
# Builds (lab_build.sh, then packed: mkdir -p /tmp/pk/N && cp /tmp/labs/N/{gdn,bench_cuda,test_cuda} /tmp/pk/N/ &&
# tar -C /tmp/pk -cJf .cubin/N.txz N): base = b4dc48f's tree ("" ""); lso = c044ee7's tree (the merged solve);
# pub = b4dc48f + s32-prep-publish-gen-once.patch; ls2 = c044ee7 + that patch; ls2lf = ls2 + s31-state-pass-cf-and-
# fence.patch with -DGDN_LAB_LF=1; nd2 = c044ee7 + s32-prep-norms-from-diagonals.patch (nd: its Q Q^T loop unrolled 2).
set -u
L=/tmp/L; mkdir -p "$L"; for l in base ls2 pub ls2lf; do tar -C "$L" -xJf .cubin/$l.txz; done
for l in ls2 pub ls2lf; do echo "== $l test_cuda rs"; timeout 60 $L/$l/test_cuda rs > "$OUT/${l}_rs.log" 2>&1; echo "rc=$?"
  grep -E "FAIL|^PASS" "$OUT/${l}_rs.log" | tail -3; done
echo "== ls2 quick"; timeout 130 $L/ls2/test_cuda quick > "$OUT/ls2_quick.log" 2>&1; echo "rc=$?"
grep -E "FAIL|^PASS" "$OUT/ls2_quick.log" | tail -3
echo "== bench_cuda --one B T --chunked: base ls2 pub ls2lf, two rounds"
for c in "1 512" "1 1024" "1 4096" "1 32768" "8 4096" "64 4096"; do set -- $c
  r=""; for l in base ls2 pub ls2lf base ls2 pub ls2lf; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
  echo "B=$1 T=$2: $r"; done
echo "== GDN_CUDA_PREP_OVERLAP=0 B=1 T=4096: base ls2 pub ls2lf"
r=""; for l in base ls2 pub ls2lf; do
  r="$r $(GDN_CUDA_PREP_OVERLAP=0 timeout 60 "$L/$l/bench_cuda" --one 1 4096 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
echo "$r"
echo "== gdn bench: base / ls2 / pub / ls2lf (median, rel_err)"
for c in "1 512" "1 4096" "1 32768" "64 4096"; do
  r=""; for l in base ls2 pub ls2lf; do set -- $c
    r="$r | $(timeout 60 "$L/$l/gdn" bench --backend cuda --algo chunked --B $1 --T $2 2>&1 | awk '/^prefill/ {print $4, $10}')"; done
  echo "$c: $r"; done
echo "== ls2 memcheck rs"; timeout 60 compute-sanitizer --tool memcheck $L/ls2/test_cuda rs > "$OUT/ls2_mc.log" 2>&1
echo "rc=$?"; grep -E "ERROR SUMMARY|^PASS" "$OUT/ls2_mc.log" | tail -2
