#!/bin/sh
# The standing order in one call (notes/next-multi-gpu.md, steps 1 to 3).
# Copy into target/gpu-bundle after `cargo xtask gpu-bundle`; carry the bundle;
# run target/gpu-bundle/standing-order.sh on a kind with two GPUs or more.
# Its logs land in $OUT.
cd "$(dirname "$0")"
export NCCL_NVLS_ENABLE=0
if [ -z "$MEMPLAN_NCCL" ]; then
  MEMPLAN_NCCL=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null); export MEMPLAN_NCCL
fi
nvidia-smi -L
echo "## run.sh tests examples"
./run.sh tests examples > $OUT/run.log 2>&1; echo "rc=$?"
grep -E '^(===|test result|FAILED|TIMEOUT|[0-9]+ passed)' $OUT/run.log
echo "## compute-sanitizer tests/gpu"
compute-sanitizer --leak-check full --report-api-errors no --error-exitcode 99 ./tests/gpu --test-threads=1 > $OUT/san-gpu.log 2>&1; echo "rc=$?"
grep -E '^test result|LEAK SUMMARY|ERROR SUMMARY|FAILED|panicked' $OUT/san-gpu.log | head
echo "## compute-sanitizer tests/multi_gpu"
compute-sanitizer --leak-check full --report-api-errors no --error-exitcode 99 ./tests/multi_gpu --test-threads=1 --skip multi_gpu::timing::each_gpus_part_is_timed_by_its_own_gpus_work --skip ranks_that_disagree > $OUT/san-multi.log 2>&1; echo "rc=$?"
grep -E '^test result|LEAK SUMMARY|ERROR SUMMARY|FAILED|panicked' $OUT/san-multi.log | head
for i in 1 2 3; do echo "## benches/multi_gpu $i"; ./benches/multi_gpu 2>&1 | tee $OUT/bench-multi-$i.log | tail -20; done
echo "## torchrun benches/ranks"
torchrun --nproc-per-node=$(nvidia-smi -L | grep -c "^GPU") --no-python ./benches/ranks > $OUT/ranks.log 2>&1; echo "rc=$?"
tail -15 $OUT/ranks.log
