#!/bin/bash
# session 37, second run: gdn bench's CUDA timing three ways per case, two rounds: "new" = the default since this
# session (replays back to back, a graph of at least 8 calls, call i on pool i mod pools); "b2b" = back to back
# with session 36's graph (one call per state pool: --graph-calls P); "old" = session 36's timing exactly
# (--idle-replays --graph-calls P). Then fla the same three ways (s37-bench-fla.py). Carry build/gdn,
# build/tests/test_cli and .fla.
set -u
S=$(date +%s)
G=build/gdn
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
one() { # args: label, bench options
  local l=$1; shift
  local j; j=$(timeout 60 $G bench --backend cuda --json "$@" 2>>$OUT/stderr.txt)
  echo "$j" >> $OUT/json.txt
  printf '%-30s %9s us (min %9s) copy %7s %%BW %6s err %s ok %s calls %s\n' "$l" \
    "$(echo "$j" | f median_us)" "$(echo "$j" | f min_us)" "$(echo "$j" | f mem_gbytes_per_s)" \
    "$(echo "$j" | f pct_mem_bw)" "$(echo "$j" | f rel_err)" "$(echo "$j" | f ok)" "$(echo "$j" | f graph_calls)"
}
for r in 1 2; do
  for c in "1 1 128" "64 1 2" "256 1 1" "1 4 128" "64 4 2" "64 4 2 --capture" "1 512 1 --algo chunked" \
           "1 4096 1 --algo chunked" "1 32768 1 --algo chunked" "8 4096 1 --algo chunked" "64 4096 1 --algo chunked"; do
    set -- $c; B=$1; T=$2; P=$3; shift 3
    one "B=$B T=$T $* r$r new" --B $B --T $T "$@"
    one "B=$B T=$T $* r$r b2b" --B $B --T $T "$@" --graph-calls $P
    one "B=$B T=$T $* r$r old" --B $B --T $T "$@" --graph-calls $P --idle-replays
  done
done
echo "gdn part: $(( $(date +%s) - S )) s"
$G bench --backend cuda > $OUT/suite.txt 2>&1; echo "suite rc=$?"; grep -E "^(decode|verify|prefill) +[0-9]|^times|^device" $OUT/suite.txt
timeout 120 build/tests/test_cli $G > $OUT/test_cli.txt 2>&1; echo "test_cli rc=$?"; tail -1 $OUT/test_cli.txt
FLA_TIMEOUT=$(( 585 - ($(date +%s) - S) )) bash docs/research/labs/s37-fla-run.sh 2>&1
echo "all: $(( $(date +%s) - S )) s"
