#!/bin/bash
# Session 38, run 3 (device; carry build/gdn, build/tests/test_cuda and .fla, fla's package, git-ignored): main with
# session 38's two changes (diag(b) in the prep's tf32 T; decode at 16 lanes on one tile per CTA): test_cuda quick,
# memcheck and racecheck of the chunked rs cases, the issues' rows in `gdn bench` (two rounds), fla's chunked rows.
set -u
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
echo "== test_cuda quick"; timeout 200 build/tests/test_cuda quick > $OUT/quick.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/quick.log | tail -3
echo "== memcheck rs"; timeout 90 compute-sanitizer --tool memcheck build/tests/test_cuda rs > $OUT/mc.log 2>&1; echo rc=$?; grep -E "ERROR SUMMARY|^PASS|^FAIL" $OUT/mc.log | tail -2
echo "== racecheck rs"; timeout 150 compute-sanitizer --tool racecheck build/tests/test_cuda rs > $OUT/rc.log 2>&1; echo rc=$?; grep -E "RACECHECK SUMMARY|^PASS|^FAIL" $OUT/rc.log | tail -2
one() { local l=$1; shift; local j; j=$(timeout 90 build/gdn bench --backend cuda --json "$@" 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-34s %9s us  %%BW %7s err %s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f pct_mem_bw)" "$(echo "$j" | f rel_err)" "$(echo "$j" | f ok)"; }
for r in 1 2; do
  for B in 1 8 64 256; do one "decode B=$B r$r" --B $B --T 1; done
  for B in 1 64; do one "verify T=4 B=$B r$r" --B $B --T 4; done
  one "verify T=4 B=64 capture r$r" --B 64 --T 4 --capture
  for c in "1 512" "1 4096" "1 32768" "8 4096" "64 4096"; do set -- $c; one "chunked B=$1 T=$2 r$r" --algo chunked --B $1 --T $2; done
  for T in 4096 32768; do one "chunked B=1 T=$T bf16 r$r" --algo chunked --B 1 --T $T --precision bf16; done
done
echo "== fla (chunked rows)"
timeout 240 python3 docs/research/labs/s37-bench-fla.py chunk 2>&1 | grep -v Warning | tee $OUT/fla.log
