#!/usr/bin/env python3
"""Where the threads of a hung process wait, on hosts without gdb (run.sh
runs it on a program past its time limit): for each thread, the system
call it is in (202 is futex, with the address waited on and the mapping
it lies in), and the words on its stack that point into executable code,
as module+offset from the module's first mapping (a PIE's own address).
A scan, not an unwinding: stale frames appear too.

The bundle's programs are stripped; the same code built unstripped has
the same layout (`cargo test --release --no-run --test gpu --config
'profile.release.strip="none"'`, another target dir is fine), and
`addr2line -f -C -e <that binary> <offsets>` names the frames, `nm -C`
the statics a futex lies in. Usage: python3 stackscan.py PID"""
import os, sys, struct, collections
pid = int(sys.argv[1])
maps = []
for line in open(f"/proc/{pid}/maps"):
    parts = line.split()
    lo, hi = (int(x, 16) for x in parts[0].split("-"))
    path = parts[5] if len(parts) > 5 else ""
    maps.append((lo, hi, parts[1], path))
base = {}
for lo, hi, perm, path in maps:
    if path and (path not in base or lo < base[path]):
        base[path] = lo
def where(addr, need_x=False):
    for lo, hi, perm, path in maps:
        if lo <= addr < hi and (not need_x or "x" in perm):
            return path, addr - base.get(path, lo)
    return None
mem = open(f"/proc/{pid}/mem", "rb", 0)
out = collections.Counter()
for tid in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
    try:
        sc = open(f"/proc/{pid}/task/{tid}/syscall").read().split()
    except Exception as e:
        print(tid, "no syscall", e); continue
    if len(sc) < 9:
        print(tid, "running", sc); continue
    nr = int(sc[0]); args = [int(x, 16) for x in sc[1:7]]; sp = int(sc[7], 16); pc = int(sc[8], 16)
    fut = where(args[0]) if nr == 202 else None
    stack_map = where(sp)
    hi = next(h for l, h, p, n in maps if l <= sp < h)
    n = min(hi - sp, 256 * 1024)
    mem.seek(sp); data = mem.read(n)
    frames = []
    for i in range(0, len(data) - 7, 8):
        (w,) = struct.unpack_from("<Q", data, i)
        hit = where(w, need_x=True)
        if hit:
            mod, off = hit
            frames.append(f"{os.path.basename(mod)}+{off:#x}")
    key = (nr, hex(args[0]) if nr == 202 else "", f"{os.path.basename(fut[0]) if fut and fut[0] else 'anon'}+{fut[1]:#x}" if fut else "")
    print(f"thread {tid}: syscall {nr} futex {key[1]} in {key[2]}")
    print("   ", " ".join(frames[:80]))
