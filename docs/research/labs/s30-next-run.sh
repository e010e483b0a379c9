#!/bin/bash
# Session 30's X^T-ahead labs (three stages; the late stage wait), built but not run, as one device command (about 7
# minutes of device time).
# Build first on the 2-core machine (a Release build of HEAD in build/, then about 4 minutes each, two at once):
#   docs/research/labs/lab_build.sh base "" ""
#   docs/research/labs/lab_build.sh xp0 s30-state-pass-x-ahead-three-stages.patch -DGDN_LAB_XP3=0
#   docs/research/labs/lab_build.sh xp3 s30-state-pass-x-ahead-three-stages.patch -DGDN_LAB_XP3=1
#   docs/research/labs/lab_build.sh xp3l s30-state-pass-x-ahead-three-stages.patch "-DGDN_LAB_XP3=1 -DGDN_LAB_XPL=1"
#   docs/research/labs/lab_build.sh xp2l s30-state-pass-x-ahead-three-stages.patch \
#       "-DGDN_LAB_XP3=0 -DGDN_LAB_XP2=1 -DGDN_LAB_XPL=1"
#   for l in base xp0 xp3 xp3l xp2l; do mkdir -p /tmp/pk/$l && cp /tmp/labs/$l/{gdn,bench_cuda,test_cuda} /tmp/pk/$l/ &&
#       tar -C /tmp/pk -cJf .cubin/$l.txz $l; done
# Then on the device (carry .cubin): bash docs/research/labs/s30-next-run.sh   (logs under $OUT)
set -u
L=/tmp/L; mkdir -p "$L"; for l in base xp0 xp3 xp3l xp2l; do tar -C "$L" -xJf .cubin/$l.txz; done
X=$L/xp3
echo "== xp3 test_cuda rs"; timeout 60 $X/test_cuda rs > "$OUT/xp3_rs.log" 2>&1; echo "rc=$?"
grep -E "rel RMS|FAIL|^PASS" "$OUT/xp3_rs.log" | tail -9
for l in xp3l xp2l; do echo "== $l test_cuda rs"; timeout 60 $L/$l/test_cuda rs 2>&1 | grep -E "FAIL|^PASS" | tail -3; done
echo "== bench_cuda --one B T --chunked: base xp0 xp3 xp3l xp2l, two rounds"
for c in "1 512" "1 4096" "1 32768" "8 4096" "64 4096"; do set -- $c
  r=""; for l in base xp0 xp3 xp3l xp2l base xp0 xp3 xp3l xp2l; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
  echo "B=$1 T=$2: $r"; done
echo "== gdn bench: base / xp3 / xp3 --precision bf16 (median, rel_err)"
for c in "1 512" "1 4096" "1 32768" "8 4096"; do
  r=""; for s in "base" "xp3" "xp3 --precision bf16"; do set -- $c $s; B=$1 T=$2 l=$3; shift 3
    r="$r | $(timeout 60 "$L/$l/gdn" bench --backend cuda --algo chunked --B $B --T $T "$@" 2>&1 | awk '/^prefill/ {print $4, $10}')"; done
  echo "$c: $r"; done
echo "== xp3 rs, two stages forced"; GDN_CUDA_RS_STAGES=2 timeout 60 $X/test_cuda rs > "$OUT/xp3_rs2.log" 2>&1; echo "rc=$?"
grep -E "FAIL|^PASS" "$OUT/xp3_rs2.log" | tail -4
echo "== xp3 quick"; timeout 130 $X/test_cuda quick > "$OUT/xp3_quick.log" 2>&1; echo "rc=$?"; grep -E "FAIL|^PASS" "$OUT/xp3_quick.log" | tail -5
echo "== xp3 memcheck rs"; timeout 60 compute-sanitizer --tool memcheck $X/test_cuda rs > "$OUT/xp3_mc.log" 2>&1; echo "rc=$?"
grep -E "ERROR SUMMARY|FAIL|^PASS" "$OUT/xp3_mc.log" | tail -3
echo "== SASS of the state pass's two- and three-stage kernels (for an instruction count per chunk): \$OUT/*.sass"
if command -v cuobjdump > /dev/null; then
  for l in base xp3; do
    cuobjdump -sass "$L/$l/test_cuda" 2>/dev/null |
      awk '/Function : /{p = /chunk_split_state_rs_kernelILi128ELi[23]ELi1ELi1ELb0/} p' > "$OUT/$l.sass"
    echo "$l: $(wc -l < "$OUT/$l.sass") lines"
  done
fi
