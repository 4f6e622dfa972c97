//! `check` on machines without a GPU: a plan's description checked against
//! device models, with the errors `new` gives. `new` itself needs a GPU;
//! the GPU tests compare the two (`tests/gpu/model_check.rs`).

use super::*;
use crate::image::Image;
use crate::plan::info::{KernelCode, ParamType, elem};
use memplan_model::{
    Arg::*, BufferKind::*, Dims::*, HostAlloc, Op::*, Place::*, Plan, Priority, Site, Size,
    Term::*, launch,
};

/// Never loaded: a check loads nothing.
static IMAGE: Image = Image::from_ptx("");

/// ```text
/// plan AddOne(n: usize, k: usize) {
///     kernel add_one(data: &mut [f32; n], n: i32) from IMAGE;
///     host data: [f32; n] pinned;
///     device on_gpu: [f32; n];
///     stream work;
///     on work {
///         copy data -> on_gpu;
///         launch add_one<<<blocks(n, 256), 256>>>(on_gpu, n as i32);
///         copy on_gpu[k..k + 4] -> data[..4];
///     }
/// }
/// ```
static ADD_ONE: PlanInfo = PlanInfo {
    model: Plan {
        site: Site("AddOne", 1, 1),
        inputs: &["n", "k"],
        sizes: &[
            Size("n", &[Input(0)]),
            Size("blocks(n, 256)", &[Input(0), Literal(256), Blocks]),
            Size("256", &[Literal(256)]),
            Size("k", &[Input(1)]),
            Size("k + 4", &[Input(1), Literal(4), Add]),
            Size("0", &[Literal(0)]),
            Size("4", &[Literal(4)]),
        ],
        kernels: &[Site("kernel add_one", 2, 5).kernel()],
        buffers: &[
            Site("data: [f32; n] pinned", 3, 10).buffer(0, Pinned(HostAlloc::PINNED)),
            Site("on_gpu: [f32; n] device", 4, 12).buffer(0, Device),
        ],
        streams: &[Site("stream work", 5, 5).stream("work", Priority::Normal)],
        ops: &[
            Site("copy data -> on_gpu", 7, 9).on(0, Copy(Whole(0), Whole(1))),
            Site("launch add_one", 8, 9).on(
                0,
                Launch(launch(
                    0,
                    Sizes(&[1]),
                    Sizes(&[2]),
                    None,
                    &[Extent(Whole(1), 0, "data"), Bound(0, "n")],
                )),
            ),
            Site("copy on_gpu[k..k + 4] -> data[..4]", 9, 9)
                .on(0, Copy(Part(1, 3, 4), Part(0, 5, 6))),
        ],
        ..Plan::EMPTY
    },
    file: "add_one.rs",
    elems: &[elem::<f32>(), elem::<f32>()],
    code: &[KernelCode::new(
        "add_one",
        &IMAGE,
        &[ParamType::POINTER, ParamType::of::<i32>()],
    )],
};

/// What the generated `AddOne::check(model, n, k)` does, the kernel given
/// `n_as_i32` for its `n`.
fn check_add_one(model: &str, n: usize, k: usize, n_as_i32: i32) -> Result<Checked> {
    let model = DeviceModel::named(model)?;
    let mut plan = Checker::new(&model, &ADD_ONE, &[n, k])?;
    plan.host::<f32>(0)?;
    plan.value::<i32>(1, 1, n_as_i32);
    plan.finish()
}

fn error_of(checked: Result<Checked>) -> String {
    match checked {
        Ok(checked) => panic!("passed its check: {checked:?}"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn sizes_within_every_limit_pass() {
    for model in DeviceModel::known() {
        check_add_one(model, 1 << 20, 16, 1 << 20).unwrap();
    }
    check_add_one("sm_90", 4, 0, 4).unwrap();
}

#[test]
fn a_range_outside_its_buffer_names_its_op_and_line() {
    assert_eq!(
        error_of(check_add_one("sm_90", 1024, 1021, 1024)),
        "plan AddOne: copy on_gpu[k..k + 4] -> data[..4] at add_one.rs:9:9: \
         range 1021..1025 is outside a buffer of 1024 elements"
    );
}

#[test]
fn a_grid_above_the_models_limit_is_refused_at_its_launch() {
    // 2^39 elements: 2^31 blocks of 256, one more than a grid's x can have.
    let n = 1usize << 39;
    assert_eq!(
        error_of(check_add_one("sm_90", n, 0, i32::MAX)),
        "plan AddOne: launch add_one at add_one.rs:8:9: \
         the grid's x dimension is 2147483648, above an sm_90 GPU's 2147483647"
    );
}

#[test]
fn a_value_an_extent_names_is_checked_against_its_size() {
    // `n as i32` of an `n` above `i32::MAX` wraps: the extent would lie.
    let n = (1usize << 32) + 1024;
    let error = error_of(check_add_one("sm_90", n, 0, n as i32));
    assert!(
        error.starts_with("plan AddOne: launch add_one at add_one.rs:8:9: `n` is 1024 as the kernel receives it, cast from 4294968320"),
        "{error}"
    );
}

#[test]
fn sizes_that_overflow_are_refused_before_anything_is_laid_out() {
    let error = error_of(check_add_one("sm_90", usize::MAX, 0, 0));
    assert!(
        error.starts_with("plan AddOne: data: [f32; n] pinned at add_one.rs:3:10: "),
        "{error}"
    );
}

/// `plan Spread(n: usize, g: usize) { gpus gpu[g]; device part[g]: [f32; n]
/// on gpu; }`: one element of `part` on each GPU.
static SPREAD: PlanInfo = PlanInfo {
    model: Plan {
        site: Site("Spread", 1, 1),
        inputs: &["n", "g"],
        sizes: &[Size("n", &[Input(0)]), Size("g", &[Input(1)])],
        buffers: &[Site("part[g]: [f32; n] device", 3, 12)
            .buffer(0, Device)
            .array(memplan_model::Array { count: 1, index: 1 })
            .on(memplan_model::Gpu::Each)],
        gpus: Some(memplan_model::GpusInfo {
            site: Site("gpus gpu[g]", 2, 5),
            count: 1,
            peer: None,
        }),
        ..Plan::EMPTY
    },
    file: "spread.rs",
    elems: &[elem::<f32>()],
    code: &[],
};

#[test]
fn a_plan_on_gpus_is_checked_on_as_many_models() {
    let hopper = DeviceModel::named("sm_90").unwrap();
    let two = [hopper.clone(), hopper];
    Checker::on_gpus(&two, &SPREAD, &[256, 2])
        .and_then(Checker::finish)
        .unwrap();
    let error = Checker::on_gpus(&two[..1], &SPREAD, &[256, 2])
        .err()
        .unwrap();
    assert_eq!(
        error.fault(),
        &Fault::GpuCount {
            declared: 2,
            given: 1
        }
    );
    let error = Checker::on_gpus(&two, &SPREAD, &[256, 0]).err().unwrap();
    assert_eq!(error.fault(), &Fault::NoGpus { given: 2 });
}

/// ```text
/// plan Rank(n: usize, root: usize) {
///     ranks world;
///     device grads: [f32; n];
///     stream s;
///     on s { all_reduce(sum) grads; broadcast(root) grads; }
/// }
/// ```
static RANK: PlanInfo = PlanInfo {
    model: Plan {
        site: Site("Rank", 1, 1),
        inputs: &["n", "root"],
        sizes: &[Size("n", &[Input(0)]), Size("root", &[Input(1)])],
        buffers: &[Site("grads: [f32; n] device", 3, 12).buffer(0, Device)],
        streams: &[Site("stream s", 4, 5).stream("s", Priority::Normal)],
        ops: &[
            Site("all_reduce(sum) grads", 5, 12).on(
                0,
                Collective(memplan_model::CollectiveInfo {
                    kind: memplan_model::CollectiveKind::AllReduce(memplan_model::ReduceOp::Sum),
                    send: Whole(0),
                    recv: Whole(0),
                    group: 0,
                }),
            ),
            Site("broadcast(root) grads", 5, 36).on(
                0,
                Collective(memplan_model::CollectiveInfo {
                    kind: memplan_model::CollectiveKind::Broadcast(1),
                    send: Whole(0),
                    recv: Whole(0),
                    group: 0,
                }),
            ),
        ],
        ranks: Some(Site("ranks world", 2, 5)),
        ..Plan::EMPTY
    },
    file: "rank.rs",
    elems: &[elem::<f32>()],
    code: &[],
};

/// Rank `rank` of a job of `count`, checked with sizes `n` and `root`.
fn check_as_rank(rank: usize, count: usize, n: usize, root: usize) -> Result<Checked> {
    let job = Rank {
        id: crate::nccl::UniqueId::from_bytes([0; 128]),
        count,
        rank,
    };
    let model = DeviceModel::named("sm_90")?;
    Checker::joining(&model, &job, &RANK, &[n, root])?.finish()
}

#[test]
fn a_rank_is_checked_with_its_jobs_ranks() {
    check_as_rank(1, 2, 1024, 0).unwrap();
    assert_eq!(
        error_of(check_as_rank(1, 2, 1024, 2)),
        "plan Rank: broadcast(root) grads at rank.rs:5:36: index 2 is past the end of a set of 2"
    );
    assert_eq!(
        error_of(check_as_rank(2, 2, 1024, 0)),
        "plan Rank: ranks world at rank.rs:2:5: index 2 is past the end of a set of 2"
    );
}

#[test]
fn ranks_checked_with_other_sizes_disagree_as_new_would() {
    let zero = check_as_rank(0, 2, 1024, 0).unwrap();
    let one = check_as_rank(1, 2, 1024, 0).unwrap();
    zero.agrees_with(&one).unwrap();
    one.agrees_with(&zero).unwrap();
    let other = check_as_rank(1, 2, 2048, 0).unwrap();
    let error = zero.agrees_with(&other).unwrap_err();
    assert_eq!(
        error.fault(),
        &Fault::RanksDisagree {
            rank: 1,
            name: Some("n"),
            here: 1024,
            there: 2048
        }
    );
    assert!(error.to_string().starts_with("plan Rank: ranks world at rank.rs:2:5: rank 1 of the job made the plan with `n` 2048, this rank with 1024"), "{error}");
    // A plan that is no rank of a job has nothing to compare.
    let alone = check_add_one("sm_90", 4, 0, 4).unwrap();
    alone.agrees_with(&zero).unwrap();
    assert!(zero.agrees_with(&alone).is_err());
}
