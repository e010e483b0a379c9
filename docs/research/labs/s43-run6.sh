#!/bin/bash
# Session 43, run 6: main with the persistent prep's next rows prefetched evict-last (m44, the tree's build; run 5's nr9
# in its merged form) checked (test_cuda quick, compute-sanitizer memcheck, racecheck and synccheck on rs) and timed
# against m43 (0ea3e7b's build): bench_cuda three rounds, gdn bench two.
set -u
L=/tmp/L; mkdir -p $L; for x in m43 m44; do tar -C $L -xJf .cubin/$x.txz; done
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
S=$SECONDS
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== m44 rs: $(timeout 100 $L/m44/test_cuda rs 2>&1 | tail -n 1); overlap 2: $(GDN_CUDA_PREP_OVERLAP=2 timeout 100 $L/m44/test_cuda rs 2>&1 | tail -n 1)"
for c in "1 2048" "1 4096" "1 32768"; do
  r=""; for x in 1 2 3; do for l in m43 m44; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $c --chunked 2>&1 | med)"; done; r="$r |"; done
  echo "bench_cuda B,T=$c (m43 m44): $r"; done
for r in 1 2; do for l in m43 m44; do for c in "512" "4096" "32768" "4096 --precision bf16" "32768 --precision bf16"; do
  j=$(timeout 60 $L/$l/gdn bench --backend cuda --json --algo chunked --B 1 --T $c 2>&1)
  echo "r$r $l T=$c: $(echo "$j" | f median_us) us err $(echo "$j" | f rel_err) ok $(echo "$j" | f ok)"; done; done; done
echo "bench done at $((SECONDS-S)) s"
echo "== m44 quick: $(timeout 200 $L/m44/test_cuda quick 2>&1 | tail -n 1)"
echo "== memcheck rs"; timeout 120 compute-sanitizer --tool memcheck $L/m44/test_cuda rs 2>&1 | tail -n 2
echo "== racecheck rs"; timeout 200 compute-sanitizer --tool racecheck $L/m44/test_cuda rs 2>&1 | tail -n 2
echo "== synccheck rs"; timeout 100 compute-sanitizer --tool synccheck $L/m44/test_cuda rs 2>&1 | tail -n 2
echo "done at $((SECONDS-S)) s") 2>&1 | tee $OUT/run6.log
