#!/bin/bash
# Session 42, run 5: run 4's ei build (s42-state-pass-inputs-early.patch) checked before its merge: test_cuda quick,
# and compute-sanitizer memcheck, racecheck and synccheck on rs.
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/ei.txz
(echo "== ei quick: $(timeout 200 $L/ei/test_cuda quick 2>&1 | tail -n 1)"
 echo "== memcheck rs"; timeout 120 compute-sanitizer --tool memcheck $L/ei/test_cuda rs 2>&1 | tail -n 2
 echo "== racecheck rs"; timeout 200 compute-sanitizer --tool racecheck $L/ei/test_cuda rs 2>&1 | tail -n 2
 echo "== synccheck rs"; timeout 100 compute-sanitizer --tool synccheck $L/ei/test_cuda rs 2>&1 | tail -n 2) 2>&1 | tee $OUT/run5.log
