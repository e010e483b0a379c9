#!/bin/bash
# session 37: the wave-prefetch labs (s37-decode-wave-prefetch.patch + s37-pairs-wave-prefetch.patch, built by
# lab_build.sh wave2 "..." -DGDN_LAB_WAVE=1 into .cubin/wave2/) against main's gdn (build/gdn); carry build/gdn, .cubin
set -u
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
one() { local l=$1; shift; local j; j=$(timeout 60 env "$@" 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-30s %9s us  %%BW %6s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f pct_mem_bw)" "$(echo "$j" | f ok)"; }
L=.cubin/wave2
timeout 240 $L/test_cuda quick > $OUT/test_quick.txt 2>&1; echo "lab test_cuda quick rc=$? $(tail -1 $OUT/test_quick.txt)"
for r in 1 2; do
  for c in "64 1" "128 1" "256 1" "64 4" "256 4"; do set -- $c
    one "B=$1 T=$2 base r$r" X=0 build/gdn bench --backend cuda --json --B $1 --T $2
    for x in 0 10 20; do
      one "B=$1 T=$2 wave x$x r$r" GDN_LAB_WAVE_X=$x $L/gdn bench --backend cuda --json --B $1 --T $2
    done
  done
done
grep "lab wave" $OUT/stderr.txt | sort | uniq -c
