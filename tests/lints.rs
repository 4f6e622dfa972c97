//! The code `memplan!` generates must compile cleanly in crates that deny
//! warnings and clippy's default lints (`cargo xtask test` runs clippy with
//! `-D warnings` over this file). The plan uses every construct of the
//! language.
#![deny(warnings, clippy::all)]
// A crate that forbids `unsafe` can use every construct: the one `unsafe`
// block of the generated code is the macro's, and holds no code of the user's.
#![forbid(unsafe_code)]

use memplan::memplan;

memplan! {
    /// Every construct at once.
    pub(crate) plan Everything(n: usize, scale: f32, input: &[f32; n] registered, output: &mut [f32; n]) {
        kernel scale_by_two(input: &[f32; n], output: &out [f32; n], n: i32) from memplan_kernels::SCALE;
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;

        host   staging: [f32; n] pinned, upload: [f32; n] pinned(write_combined, portable);
        host   shared: [f32; n] mapped, scratch: [f32; n] pageable, total: [f32; 1] pageable;
        device a: [f32; n], b: [f32; n];
        stream first priority high, second priority -1, third;
        event  uploaded, doubled;

        fill a with 0.0;
        fill scratch[..] with scale;
        on first {
            copy input -> a;
            copy upload -> b;
            record uploaded;
        }
        on second {
            wait uploaded;
            launch scale_by_two<<<blocks(n, 256), 256, 0>>>(a, shared, n as i32);
            alloc tmp: [f32; n];
            copy b -> tmp;
            launch process_data<<<(blocks(n, 256), 1), (256, 1, 1)>>>(tmp, n as i32);
            copy tmp[..n / 2] -> staging[n / 2..n / 2 + n / 2];
            free tmp;
            record doubled;
        }
        on third {
            wait doubled;
            fill b[n / 2..] with 1.0;
        }
        sync all;
        host(&shared, &mut total) {
            total[0] = shared.iter().sum::<f32>() * scale;
        }
        copy shared -> output;
        copy scratch -> a;
        launch process_data<<<blocks(n, 256), 256>>>(a, n as i32);
    }
}

#[test]
fn every_construct_lowers_to_a_plan() {
    let summary = Everything::SUMMARY;
    for op in [
        "fill a with 0.0",
        "alloc tmp",
        "launch scale_by_two",
        "host(&shared, &mut total)",
        "sync all",
    ] {
        assert!(summary.contains(op), "the summary lacks `{op}`:\n{summary}");
    }
    let ops = summary.lines().skip_while(|line| *line != "  ops:").skip(1);
    assert_eq!(ops.count(), 20, "{summary}");
    assert!(
        Everything::DIAGRAM.contains("-.->|uploaded|"),
        "{}",
        Everything::DIAGRAM
    );
}

memplan! {
    /// A rank of a job: its communicator and NCCL's calls.
    pub(crate) plan Rank(n: usize) {
        ranks world;
        device d: [f32; n];
        stream s;
        on s {
            fill d with 1.0;
            all_reduce sum d;
        }
    }

    /// A plan on several GPUs, with a collective between them.
    pub(crate) plan Spread(n: usize, g: usize) {
        gpus   gpu[g];
        device part[g]: [f32; n] on gpu;
        stream s[g] on gpu;
        for i in 0..g {
            on s[i] {
                fill part[i] with 1.0;
                all_reduce sum part[i];
            }
        }
    }
}

/// A plan can move to another thread (a worker that runs it, a pool),
/// whatever it holds (`tests/gpu/threads.rs` runs one on three threads).
/// It is not `Sync`: `host()` takes `&self` and waits for a run in flight
/// through state that one thread at a time may use.
#[test]
fn plans_are_send_and_not_sync() {
    fn send<T: Send>() {}
    send::<Everything>();
    send::<Rank>();
    send::<Spread>();

    // `T::check` names one function where `T` is not `Sync`, and two,
    // which the compiler cannot choose between, where it is: this test
    // stops compiling if a plan becomes `Sync`.
    trait NotSync<Marker> {
        fn check() {}
    }
    impl<T: ?Sized> NotSync<()> for T {}
    struct IfSync;
    impl<T: ?Sized + Sync> NotSync<IfSync> for T {}
    <Everything as NotSync<_>>::check();
    <Rank as NotSync<_>>::check();
    <Spread as NotSync<_>>::check();
}
