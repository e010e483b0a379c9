#!/bin/bash
# Session 29's labs that are built but not run, as one device command (about 4 minutes of device time).
# Build first on the 2-core machine (a Release build in build/, then about 4 minutes each, two at once):
#   docs/research/labs/lab_build.sh base "" ""
#   docs/research/labs/lab_build.sh spf s29-prep-state-prefetch.patch -DGDN_LAB_SPF=16
#   TRACE_PATCH=s29-state-pass-phase-trace.patch TRACE_DEF=-DGDN_LAB_RSTRACE=1 docs/research/labs/lab_trace.sh rst
#   for l in base spf rst; do mkdir -p /tmp/pk/$l && cp /tmp/labs/$l/{gdn,bench_cuda,test_cuda} /tmp/pk/$l/; done
#   cp /tmp/labs/rst/bench_trace /tmp/pk/rst/ && for l in base spf rst; do tar -C /tmp/pk -cJf .cubin/$l.txz $l; done
# Optional, the BF16-precision lab (a full build: it changes backend.cu), packed as .cubin/pbf.txz:
#   rm -rf /tmp/pb && mkdir /tmp/pb && cp -r CMakeLists.txt Makefile README.md cmake include src tests tools /tmp/pb/
#   patch -d /tmp/pb -p1 < docs/research/labs/s29-precision-bf16-state-pass.patch
#   cmake -S /tmp/pb -B /tmp/pb/build -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/pb/build -j 2
#   mkdir -p /tmp/pk/pbf && cp /tmp/pb/build/gdn /tmp/pb/build/tests/{bench_cuda,test_cuda} /tmp/pk/pbf/ &&
#   tar -C /tmp/pk -cJf .cubin/pbf.txz pbf
# Then on the device (carry .cubin): bash docs/research/labs/s29-next-run.sh   (logs under $OUT)
set -u
L=/tmp/L; mkdir -p "$L"; for l in base spf rst; do tar -C "$L" -xJf .cubin/$l.txz; done
echo "== the state pass's steps per chunk (rst: clock64, CTA (0, 0))"
for T in 4096 32768 512; do echo "-- T=$T"; timeout 60 "$L/rst/bench_trace" --one 1 $T --chunked 2>&1 | grep -E "rstrace|median"; done
echo "== spf (state prefetched into L2 by the prep) against base: gdn bench, pools rotated, two rounds"
for c in "1 512" "1 1024" "8 4096" "1 4096"; do set -- $c
  r=""; for l in base spf base spf; do
    r="$r $(timeout 60 "$L/$l/gdn" bench --backend cuda --algo chunked --B $1 --T $2 2>&1 | awk '/^prefill/ {print $4}')"; done
  echo "B=$1 T=$2: $r"; done
echo "== spf test_cuda rs"; timeout 60 "$L/spf/test_cuda" rs > "$OUT/spf_rs.log" 2>&1; echo "rc=$?"; grep -E "^(FAIL|PASS)" "$OUT/spf_rs.log"
if [ -f .cubin/pbf.txz ]; then
  tar -C "$L" -xJf .cubin/pbf.txz
  echo "== pbf test_cuda rs (the Qwen layer's errors, default and precision bf16)"
  timeout 90 "$L/pbf/test_cuda" rs > "$OUT/pbf_rs.log" 2>&1; echo "rc=$?"; grep -E "rel RMS|^(FAIL|PASS)" "$OUT/pbf_rs.log"
  echo "== gdn bench: base default / pbf default / pbf --precision bf16"
  for c in "1 4096" "1 32768" "64 4096"; do
    r=""; for s in "base" "pbf" "pbf --precision bf16"; do set -- $c $s; B=$1 T=$2 l=$3; shift 3
      r="$r $(timeout 90 "$L/$l/gdn" bench --backend cuda --algo chunked --B $B --T $T "$@" 2>&1 | awk '/^prefill/ {print $4, $10}')"; done
    echo "$c: $r"; done
  echo "== pbf quick"; timeout 150 "$L/pbf/test_cuda" quick > "$OUT/pbf_quick.log" 2>&1; echo "rc=$?"; grep -E "^(FAIL|PASS)" "$OUT/pbf_quick.log"
fi
