#!/bin/bash
# session 37: the B=1 chunked rows in the new timing with every product in bf16 (--precision bf16, the issue's
# "bf16 operands") beside the default (tf32 for the solve's product), three rounds; carry build/gdn
set -u
G=build/gdn
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
one() { local l=$1; shift; local j; j=$(timeout 60 $G bench --backend cuda --json "$@" 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-36s %9s us  err %s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f rel_err)" "$(echo "$j" | f ok)"; }
for r in 1 2 3; do
  for T in 512 4096 32768; do
    one "B=1 T=$T default r$r" --algo chunked --B 1 --T $T
    one "B=1 T=$T bf16 r$r" --algo chunked --B 1 --T $T --precision bf16
  done
done
