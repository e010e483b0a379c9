#!/bin/bash
# Session 39, run 5: where the overlapped order starts to pay at B=1 (run 4: the passes in turn were 1.1-1.3% faster at
# T=1280 and 1536, the overlap 9% faster at T=2048); main (m39), default against GDN_CUDA_PREP_OVERLAP=0, two rounds.
set -u
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/m39.txz
G=$L/m39/gdn
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
one() { local l=$1; shift; local j; j=$(timeout 90 env "$@" --backend cuda --json 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-36s %9s us  err %s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f rel_err)" "$(echo "$j" | f ok)"; }
for r in 1 2; do
  for T in 1088 1536 1600 1664 1728 1792 1856 1920 1984 2048; do
    one "chunked B=1 T=$T r$r" X=1 $G bench --algo chunked --B 1 --T $T
    one "chunked B=1 T=$T ovl=0 r$r" GDN_CUDA_PREP_OVERLAP=0 $G bench --algo chunked --B 1 --T $T
  done
done
