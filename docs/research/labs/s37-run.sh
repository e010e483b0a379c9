#!/bin/bash
# session 37: gdn bench's CUDA timing, replays back to back (the new default) against --idle-replays (each replay
# from an idle GPU, the host's launch latency counted: sessions <= 36); carry build/gdn and build/tests/test_cli
# (a Release build of this tree). JSON medians, two rounds alternating.
set -u
G=build/gdn
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
one() { # args: label, bench options
  local l=$1; shift
  local j; j=$(timeout 60 $G bench --backend cuda --json "$@" 2>>$OUT/stderr.txt)
  echo "$j" >> $OUT/json.txt
  printf '%-34s median %9s us  min %9s  copy %7s GB/s  %%BW %6s  rel_err %s ok %s replays %s pools %s\n' "$l" \
    "$(echo "$j" | f median_us)" "$(echo "$j" | f min_us)" "$(echo "$j" | f mem_gbytes_per_s)" \
    "$(echo "$j" | f pct_mem_bw)" "$(echo "$j" | f rel_err)" "$(echo "$j" | f ok)" "$(echo "$j" | f replays)" \
    "$(echo "$j" | f state_pools)"
}
for r in 1 2; do
  for c in "1 1" "64 1" "256 1" "1 4" "64 4"; do set -- $c
    one "B=$1 T=$2 r$r b2b" --B $1 --T $2
    one "B=$1 T=$2 r$r idle" --B $1 --T $2 --idle-replays
  done
  one "B=64 T=4 capture r$r b2b" --B 64 --T 4 --capture
  one "B=64 T=4 capture r$r idle" --B 64 --T 4 --capture --idle-replays
  for c in "1 512" "1 4096" "1 32768" "8 4096" "64 4096"; do set -- $c
    one "chunked B=$1 T=$2 r$r b2b" --algo chunked --B $1 --T $2
    one "chunked B=$1 T=$2 r$r idle" --algo chunked --B $1 --T $2 --idle-replays
  done
done
$G bench --backend cuda > $OUT/suite.txt 2>&1; echo "suite rc=$?"; grep -E "^(decode|verify|prefill) +[0-9]|^times|^device" $OUT/suite.txt
timeout 150 build/tests/test_cli $G > $OUT/test_cli.txt 2>&1; echo "test_cli rc=$?"; tail -3 $OUT/test_cli.txt
