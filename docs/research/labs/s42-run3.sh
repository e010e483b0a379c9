#!/bin/bash
# Session 42, run 3: main with runs 1-2's changes (m42: the workspace's blocks on whole lines with gl's sector written
# in full, and precision BF16's T copied as its bf16 half) checked (test_cuda quick, compute-sanitizer memcheck and
# racecheck on rs) and every row of issues 4 and 5 measured (gdn bench, two rounds, as s41-run3.sh); and the persistent
# prep prefetching its chunk's v rows into L2 for the state pass (s42-prep-v-l2.patch, vp1 = -DGDN_LAB_VP=1, on m42).
set -u
L=/tmp/L; mkdir -p $L; for x in m42 vp1; do tar -C $L -xJf .cubin/$x.txz; done
G=$L/m42/gdn
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv | tail -1
one() { local l=$1; shift; local j; j=$(timeout 90 env "$@" --backend cuda --json 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-36s %9s us  %%BW %7s err %s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f pct_mem_bw)" "$(echo "$j" | f rel_err)" "$(echo "$j" | f ok)"; }
S=$SECONDS
echo "== vp1 test_cuda rs: $(timeout 100 $L/vp1/test_cuda rs 2>&1 | tail -n 1)"
for c in "1 2048" "1 4096" "1 32768"; do
  r=""; for x in 1 2 3; do for l in m42 vp1; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $c --chunked 2>&1 | med)"; done; r="$r |"; done
  echo "bench_cuda B,T=$c (m42 vp1): $r"; done
echo "lab done at $((SECONDS-S)) s"
for r in 1 2; do
  for B in 1 8 64 256; do one "decode B=$B r$r" X=1 $G bench --B $B --T 1; done
  for B in 1 64; do one "verify T=4 B=$B r$r" X=1 $G bench --B $B --T 4; done
  one "verify T=4 B=64 capture r$r" X=1 $G bench --B 64 --T 4 --capture
  for c in "1 512" "1 4096" "1 32768" "8 4096" "64 4096"; do set -- $c
    one "chunked B=$1 T=$2 r$r" X=1 $G bench --algo chunked --B $1 --T $2; done
  for T in 4096 32768; do one "chunked B=1 T=$T bf16 r$r" X=1 $G bench --algo chunked --B 1 --T $T --precision bf16; done
  echo "round $r at $((SECONDS-S)) s"
done
echo "== test_cuda quick"; timeout 200 $L/m42/test_cuda quick 2>&1 | tail -n 2
echo "== memcheck rs"; timeout 240 compute-sanitizer --tool memcheck $L/m42/test_cuda rs 2>&1 | tail -n 3
echo "== racecheck rs"; timeout 300 compute-sanitizer --tool racecheck $L/m42/test_cuda rs 2>&1 | tail -n 3
echo "done at $((SECONDS-S)) s"
