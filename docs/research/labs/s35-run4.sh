#!/bin/bash
# session 35: standing numbers of main's kernels (base = lab_build.sh base "" "" of 5e87ed8's tree), gdn bench, twice
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/base.txz; G=$L/base/gdn
row() { r=""; for rep in 1 2; do r="$r | $($G bench --backend cuda "$@" 2>&1 | awk '/^(decode|prefill|verify)/ {print $4, $10}')"; done; echo "$*: $r"; }
row --B 1 --T 1; row --B 64 --T 1; row --B 256 --T 1
row --B 1 --T 4; row --B 64 --T 4; row --B 64 --T 4 --capture
row --algo chunked --B 1 --T 512; row --algo chunked --B 1 --T 4096; row --algo chunked --B 1 --T 32768
row --algo chunked --B 8 --T 4096; row --algo chunked --B 64 --T 4096
$G bench --backend cuda > $OUT/default_suite.txt 2>&1; cat $OUT/default_suite.txt | tail -15
