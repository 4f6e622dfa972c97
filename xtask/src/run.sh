#!/bin/sh
# Runs every GPU test, example and benchmark of this bundle. Needs only an
# NVIDIA driver (580 or newer): no Rust, no CUDA toolkit. The last line it
# prints is "N passed, N failed"; it exits non-zero if anything failed.
#
#   ./run.sh                    everything
#   ./run.sh tests examples     some kinds only (of tests, examples, benches)
#   SANITIZE=1 ./run.sh tests   each program under compute-sanitizer --leak-check full
#                               (API errors that tests provoke on purpose are not reported;
#                               tests run one at a time, since the sanitizer's own
#                               synchronization from another thread would invalidate a
#                               graph capture in progress; the timing of a plan on several
#                               GPUs, which needs CUPTI, is left out)
#   MEMPLAN_PROGRAM_LIMIT=600   seconds one program may run (default 900): past it,
#                               its threads' stacks are printed and it fails
#
# Test binaries count one per test; examples and benchmarks one per program.
cd "$(dirname "$0")" || exit 2

# A GPU test that finds no GPU fails here, instead of reporting itself ignored;
# so does a multi-GPU test on a host with the GPUs it needs.
export MEMPLAN_REQUIRE_GPU=1
if [ -z "$MEMPLAN_REQUIRE_GPUS" ]; then
    # The GPUs this process may use: CUDA_VISIBLE_DEVICES's, else the host's.
    if [ -n "${CUDA_VISIBLE_DEVICES+set}" ]; then
        MEMPLAN_REQUIRE_GPUS=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
    else
        MEMPLAN_REQUIRE_GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
    fi
    export MEMPLAN_REQUIRE_GPUS
fi
# NVLink multicast (NVLink SHARP) stays off in every process: a program
# that goes wrong with it on can take the host's GPUs out of service.
export NCCL_NVLS_ENABLE=0
# NCCL: the loader's, else the one PyTorch's wheels installed.
if [ -z "$MEMPLAN_NCCL" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnccl.so.2 '; then
    found=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
    [ -n "$found" ] && [ -f "$found" ] && export MEMPLAN_NCCL="$found"
fi
# Timing tests fail where CUPTI cannot time a run, instead of accepting the
# events fallback; not under the sanitizer, which holds CUPTI itself.
[ -n "$SANITIZE" ] || export MEMPLAN_REQUIRE_CUPTI=1

passed=0
failed=0
log=$(mktemp)

# How long one program may run (seconds); past it, where its threads wait is
# printed and it is stopped, so that a hang is a failure with a trace, not a
# run that never ends.
limit=${MEMPLAN_PROGRAM_LIMIT:-900}

limited() {
    "$@" &
    pid=$!
    (
        sleep "$limit"
        kill -0 "$pid" 2>/dev/null || exit 0
        echo "TIMEOUT: $* ran past $limit s; where its threads wait:"
        for task in /proc/"$pid"/task/*; do
            echo "  $(cat "$task/comm" 2>/dev/null): $(cat "$task/wchan" 2>/dev/null)"
        done
        if command -v gdb >/dev/null; then
            gdb -batch -ex "thread apply all bt 16" -p "$pid" 2>&1 | grep -E '^(Thread|#)'
        elif command -v python3 >/dev/null; then
            python3 stackscan.py "$pid"
        fi
        kill -9 "$pid"
    ) &
    watcher=$!
    wait "$pid"
    status=$?
    kill "$watcher" 2>/dev/null
    return $status
}

under_sanitizer() {
    if [ -n "$SANITIZE" ]; then
        limited compute-sanitizer --leak-check full --report-api-errors no --error-exitcode 99 "$@"
    else
        limited "$@"
    fi
}

for kind in ${*:-tests examples benches}; do
    [ -d "$kind" ] || continue
    for program in "$kind"/*; do
        echo "=== $program"
        if [ -n "$SANITIZE" ] && [ "$kind" = tests ]; then
            # The sanitizer holds CUPTI, and a plan on several GPUs is timed
            # by CUPTI only (single-GPU plans fall back to events): that one
            # test cannot run under it, and is left out, not passed.
            under_sanitizer "./$program" --test-threads=1 \
                --skip multi_gpu::timing::each_gpus_part_is_timed_by_its_own_gpus_work \
                >"$log" 2>&1
        else
            under_sanitizer "./$program" >"$log" 2>&1
        fi
        status=$?
        cat "$log"
        summary=$(grep '^test result:' "$log" | tail -n 1)
        if [ "$kind" = tests ] && [ -n "$summary" ]; then
            p=$(echo "$summary" | sed -n 's/.* \([0-9][0-9]*\) passed.*/\1/p')
            f=$(echo "$summary" | sed -n 's/.* \([0-9][0-9]*\) failed.*/\1/p')
            passed=$((passed + ${p:-0}))
            failed=$((failed + ${f:-0}))
            # A crash after the summary, or a sanitizer finding, fails too.
            if [ "$status" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
                failed=$((failed + 1))
                echo "FAILED: $program (exit $status)"
            fi
        elif [ "$status" -eq 0 ]; then
            passed=$((passed + 1))
        else
            failed=$((failed + 1))
            echo "FAILED: $program (exit $status)"
        fi
    done
done
rm -f "$log"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
