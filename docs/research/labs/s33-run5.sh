#!/bin/bash
# Session 33, run 5 (device; carry .cubin): does the state pass's lf (s31) show once the prep's items are shorter?
# lf = s31-state-pass-cf-and-fence.patch -DGDN_LAB_LF=1; pfr = s33-prep-rows-one-item-ahead.patch -DGDN_LAB_PFR=1
# (the persistent prep issuing the next item's rows into a second region); lfpfr = both; base = a175669's kernels.
# Then the overlap trace with and without lf (tr, trlf: lab_trace.sh with s33-overlap-trace.patch, trlf with
# s33-lf-on-trace.patch -DGDN_LAB_LF=1). Packed as .cubin/N.txz (gdn, bench_cuda, test_cuda; tr*: bench_trace).
set -u
L=/tmp/L; mkdir -p "$L"; for l in base lf pfr lfpfr tr trlf; do tar -C "$L" -xJf .cubin/$l.txz; done
for l in pfr lfpfr; do echo "== $l test_cuda rs"; timeout 60 $L/$l/test_cuda rs > "$OUT/${l}_rs.log" 2>&1; echo "rc=$?"
  grep -E "FAIL|^PASS" "$OUT/${l}_rs.log" | tail -2; done
echo "== bench_cuda --one B T --chunked: base lf pfr lfpfr, two rounds"
for c in "1 4096" "1 32768"; do set -- $c
  r=""; for l in base lf pfr lfpfr base lf pfr lfpfr; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
  echo "B=$1 T=$2: $r"; done
for l in tr trlf; do for T in 4096 32768; do echo "== trace $l T=$T"
  timeout 60 $L/$l/bench_trace --one 1 $T --chunked > "$OUT/${l}_$T.log" 2>&1
  grep -oE "median +[0-9]+\.[0-9]+" "$OUT/${l}_$T.log"; grep "^trace" "$OUT/${l}_$T.log" | grep -vE "chunk +[0-9]+ items" ; done; done
