// `check`, which every plan type has, runs here without a GPU: it takes
// what `new` takes, with a device model for each context, and refuses
// what `new` would refuse for a reason that needs no GPU, with the same
// error. Each shape of `new` has its `check`: `run` parameters and caller
// slices (given to each run, so neither to `check`), values, GPUs, ranks.
#![deny(warnings)]
use memplan::nccl::{Rank, UniqueId};
use memplan::prelude::*;
use memplan::Fault;

memplan! {
    plan Saxpy(cap: usize, run len: usize, run a: f32) {
        kernel saxpy(n: i32, a: f32, x: &[f32; n], y: &mut [f32; n]) from memplan_kernels::SAXPY;
        host   x: [f32; cap] pinned, y: [f32; cap] pinned;
        device dx: [f32; cap], dy: [f32; cap];
        stream s;
        on s {
            copy x[..len] -> dx[..len];
            copy y[..len] -> dy[..len];
            launch saxpy<<<blocks(len, 256), 256>>>(len as i32, a, dx[..len], dy[..len]);
            copy dy[..len] -> y[..len];
        }
    }

    /// A value only a host step reads, one a fill writes, and slices of
    /// any length.
    plan Valued(n: usize, label: f32, start: f32, from: &[f32], to: &mut [f32]) {
        host   data: [f32; n] pageable, note: [f32; 1] pageable;
        device d: [f32; n];
        fill d with start;
        copy d -> data;
        copy from[..2] -> to[..2];
        host(&mut note) { note[0] = label; }
    }

    plan Spread(n: usize, g: usize) {
        gpus   gpu[g];
        host   x: [f32; n * g] pinned;
        device part[g]: [f32; n] on gpu;
        stream s[g] on gpu;
        for i in 0..g {
            on s[i] {
                copy x[i * n..i * n + n] -> part[i];
                copy part[i] -> x[i * n..i * n + n];
            }
        }
    }

    plan OneRank(n: usize, root: usize) {
        ranks  world;
        host   x: [f32; n] pinned;
        device grads: [f32; n];
        stream s;
        on s {
            copy x -> grads;
            all_reduce avg grads;
            broadcast grads from root;
            copy grads -> x;
        }
    }
}

fn main() -> memplan::Result<()> {
    let hopper = DeviceModel::named("sm_90")?;

    Saxpy::check(&hopper, 1 << 20)?;
    Valued::check(&hopper, 1024, 1.0, 0.5)?;
    // A size that overflows a buffer's bytes, named at the buffer.
    let error = Valued::check(&hopper, usize::MAX / 2, 1.0, 0.5).unwrap_err();
    assert_eq!(error.operation(), "data: [f32; n] pageable", "{error}");

    Spread::check(&[hopper.clone(), hopper.clone()], 256, 2)?;
    let error = Spread::check(&[hopper.clone()], 256, 2).unwrap_err();
    assert_eq!(error.fault(), &Fault::GpuCount { declared: 2, given: 1 }, "{error}");

    let rank = |rank| Rank { id: UniqueId::from_bytes([0; 128]), count: 2, rank };
    let zero = OneRank::check(&hopper, &rank(0), 1024, 1)?;
    let one = OneRank::check(&hopper, &rank(1), 1024, 1)?;
    zero.agrees_with(&one)?;
    // The root is a rank of the job, or the broadcast is refused.
    let error = OneRank::check(&hopper, &rank(0), 1024, 2).unwrap_err();
    assert_eq!(error.fault(), &Fault::Element { index: 2, count: 2 }, "{error}");
    // Ranks checked with other sizes would fail `new` on every rank.
    let other = OneRank::check(&hopper, &rank(1), 2048, 1)?;
    let error = zero.agrees_with(&other).unwrap_err();
    assert!(error.to_string().contains("`n` 2048, this rank with 1024"), "{error}");
    Ok(())
}
