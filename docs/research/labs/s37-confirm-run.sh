#!/bin/bash
# session 37: the issue rows once more on a fresh machine in gdn bench's new timing (three rounds), and the chunked
# B=1 rows' dependence on the calls per graph (--graph-calls 1 .. 32); carry build/gdn
set -u
G=build/gdn
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
one() { local l=$1; shift; local j; j=$(timeout 60 $G bench --backend cuda --json "$@" 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-34s %9s us  %%BW %6s err %s ok %s calls %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f pct_mem_bw)" \
    "$(echo "$j" | f rel_err)" "$(echo "$j" | f ok)" "$(echo "$j" | f graph_calls)"; }
for r in 1 2 3; do
  for c in "1 1" "64 1" "256 1" "1 4" "64 4"; do set -- $c; one "B=$1 T=$2 r$r" --B $1 --T $2; done
  for T in 512 4096 32768; do one "chunked B=1 T=$T r$r" --algo chunked --B 1 --T $T; done
done
for n in 1 2 4 8 16 32; do
  for T in 512 4096; do one "chunked B=1 T=$T calls $n" --algo chunked --B 1 --T $T --graph-calls $n; done
done
