#!/bin/sh
# Issue 28's checks on one GPU, in one call (copy into target/gpu-bundle
# after `cargo xtask gpu-bundle`; carry the bundle; run
# target/gpu-bundle/graphs-check.sh). Logs land in $OUT.
#   1. tests/gpu and the examples, then tests/gpu under compute-sanitizer;
#   2. benches/small_ops (the issue's figures, ratios in one run);
#   3. small_ops --dot: the by-hand graph of 100 launches and the plan's,
#      as DOT, to find what memplan's replay trails the by-hand graph by
#      (notes/graphs-next.md); the first lines of each node are printed.
cd "$(dirname "$0")"
nvidia-smi -L; cat COMMIT 2>/dev/null
./run.sh tests examples > $OUT/tests.log 2>&1; echo "tests examples rc=$?"
grep -E "^test result|[0-9]+ passed,|FAILED|TIMEOUT" $OUT/tests.log
SANITIZE=1 ./run.sh tests > $OUT/san.log 2>&1; echo "sanitizer rc=$?"
grep -E "^test result|LEAK SUMMARY|ERROR SUMMARY|[0-9]+ passed,|FAILED" $OUT/san.log
./benches/small_ops > $OUT/small_ops.log 2>&1; echo "small_ops rc=$?"
grep -E "launches and 2 fills|by hand|plan.run|replayed|x the|node by node" $OUT/small_ops.log
./benches/small_ops --dot $OUT; echo "dot rc=$?"
for f in $OUT/by-hand-100.dot $OUT/plan-100.dot; do
  echo "== $f: $(grep -c 'shape' $f) nodes, $(grep -c -- '->' $f) edges"
done
