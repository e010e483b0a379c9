#!/bin/bash
# Session 41, run 3: main (m41 = 809d213's build: bench_cuda, test_cuda, gdn) checked as session 40 left unchecked
# (test_cuda quick, compute-sanitizer memcheck and racecheck on rs) and every row of issues 4 and 5 measured again
# (gdn bench, two rounds, as s39-run4.sh).
set -u
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/m41.txz
G=$L/m41/gdn
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv | tail -1
one() { local l=$1; shift; local j; j=$(timeout 90 env "$@" --backend cuda --json 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-36s %9s us  %%BW %7s err %s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f pct_mem_bw)" "$(echo "$j" | f rel_err)" "$(echo "$j" | f ok)"; }
S=$SECONDS
for r in 1 2; do
  for B in 1 8 64 256; do one "decode B=$B r$r" X=1 $G bench --B $B --T 1; done
  for B in 1 64; do one "verify T=4 B=$B r$r" X=1 $G bench --B $B --T 4; done
  one "verify T=4 B=64 capture r$r" X=1 $G bench --B 64 --T 4 --capture
  for c in "1 512" "1 4096" "1 32768" "8 4096" "64 4096"; do set -- $c
    one "chunked B=$1 T=$2 r$r" X=1 $G bench --algo chunked --B $1 --T $2; done
  for T in 4096 32768; do one "chunked B=1 T=$T bf16 r$r" X=1 $G bench --algo chunked --B 1 --T $T --precision bf16; done
  echo "round $r at $((SECONDS-S)) s"
done
echo "== test_cuda quick"; timeout 200 $L/m41/test_cuda quick 2>&1 | tail -n 2
echo "== memcheck rs"; timeout 240 compute-sanitizer --tool memcheck $L/m41/test_cuda rs 2>&1 | tail -n 3
echo "== racecheck rs"; timeout 300 compute-sanitizer --tool racecheck $L/m41/test_cuda rs 2>&1 | tail -n 3
echo "done at $((SECONDS-S)) s"
