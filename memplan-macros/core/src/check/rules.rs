//! Every rule of the language in one list: its name, what it refuses and
//! why (the language reference's table of checks is [`table`]'s, which a
//! test holds equal), the words every error of the rule contains, and a
//! compile-fail case that shows it (`tests/ui/fail/`, whose `.stderr` a
//! test holds to contain those words). [`super::run`] runs the checks in
//! this order; the rules enforced elsewhere say where.

use super::Facts;
use super::{
    bounds, collectives, copies, fixed_at_new, formation, gpu_placement, gpus, host_steps,
    iterations, launch, lifetime, order, race, reach,
};
use crate::errors::Errors;
use crate::ir::Plan;

/// One rule.
pub struct Rule {
    /// Its name: the function is `check_` and the name.
    pub name: &'static str,
    /// What it refuses, for the reference's table.
    pub refuses: &'static str,
    /// Why, or what else holds, for the table.
    pub because: &'static str,
    /// Its errors' words: every error the rule reports contains one of
    /// them.
    pub says: &'static [&'static str],
    /// A compile-fail case under `tests/ui/fail/` that one of its errors
    /// fails.
    pub case: &'static str,
    /// Where it is enforced.
    pub enforced: Enforced,
}

/// Where a rule is enforced.
#[derive(Clone, Copy)]
pub enum Enforced {
    /// By a check of the IR as written, before the others: they take for
    /// granted what these refuse (each op on a lane where it can run), so
    /// they run only where these found nothing.
    Formation(fn(&Plan, &Errors)),
    /// By a check of the IR, in this module.
    Check(fn(&Facts, &Errors)),
    /// While the IR is built (`ir::build`): without every name resolved
    /// there is no IR to check, so these are reported alone.
    Building,
    /// While the plan is lowered (`lower/given.rs`): whether `new`
    /// computes an expression with the user's Rust, or the runtime with
    /// the size arithmetic, is the arithmetic's own reading of it
    /// (`lower/sizes.rs`), which the checks do not make.
    Lowering,
    /// By rustc, evaluating a constant of the generated code: each kernel
    /// declaration against the kernel's compiled signature
    /// (`lower/kernels.rs`, the runtime's `check_kernel`).
    Declaration,
}

/// Every rule, in the order the checks run.
pub const RULES: &[Rule] = &[
    Rule {
        name: "names",
        refuses: "a name not declared, declared twice, or of the wrong kind (`free` of memory the plan keeps, `peer` of GPUs the plan does not run on); `gpus` without a count; two plans of one name",
        because: "plan types and their items cannot otherwise collide: everything a plan generates besides its type is out of reach",
        says: &[
            "is not declared in this plan",
            "is declared twice",
            "is already defined",
            "is already",
            "declared already",
            "is not the plan's GPUs",
            "say how many GPUs",
            "so it cannot be freed in it",
            "which memplan keeps for the code it generates",
            "is needed here",
        ],
        case: "name_undeclared_buffer.rs",
        enforced: Enforced::Building,
    },
    Rule {
        name: "set_indexes",
        refuses: "a set used without its index, outside the loop, or indexed two ways in one loop; one declaration indexed as a set; a range the loop does not name",
        because: "a loop uses one element of each set, the same in all its body",
        says: &[
            "not a set of them",
            ": say which one",
            "can be used only in a `for` loop",
            "elsewhere in this loop",
            "is not a range of this loop",
        ],
        case: "loop_set_used_outside_a_loop.rs",
        enforced: Enforced::Building,
    },
    Rule {
        name: "sizes",
        refuses: "a length, range, count or index memplan cannot read as a size",
        because: "sizes are written with integers, `usize` plan parameters and constants, `+ - * / %`, parentheses, `as usize`, calls and `xs.len()` of a caller's slice: what the checks can prove things of",
        says: &[
            "a size memplan cannot read",
            "parameter, not a size",
            "a size beyond what `usize` holds",
        ],
        case: "length_not_symbolic.rs",
        enforced: Enforced::Building,
    },
    Rule {
        name: "extents_in_parameters",
        refuses: "a kernel parameter's extent written in other than integers, the kernel's integer value parameters, `+ - * / %` and parentheses",
        because: "each launch computes the extent from its arguments",
        says: &[
            "is not a parameter of",
            "an extent counts elements with integers",
            "is a slice parameter, not a count",
            "an extent memplan cannot read",
            "an extent nested more than",
        ],
        case: "signature_extent_names.rs",
        enforced: Enforced::Building,
    },
    Rule {
        name: "ops_where_they_run",
        refuses: "an op written where it cannot run: `record`, `wait`, `alloc`, `free`, a collective or (on several GPUs) a launch outside stream blocks; `sync` or a host step inside one",
        because: "events mark points in a stream; `sync` and host steps wait on the host",
        says: &[
            "must be in a stream block",
            "cannot be in a stream block",
            "not allocated or freed in a loop",
        ],
        case: "place_alloc_outside_stream_block.rs",
        enforced: Enforced::Formation(formation::check_ops_where_they_run),
    },
    Rule {
        name: "declaration_forms",
        refuses: "`registered` on a parameter that is not a slice, `run` on a slice, a bound (`<= cap`) on a parameter that is not a size, a set of buffers that are not `device` memory",
        because: "a caller's slice is given to each run already, and page-locked for it; host and stream-ordered memory are one buffer each",
        says: &[
            "only borrowed slices can be `registered`",
            "is given to each run already",
            "which only `device` memory can be",
            "only a size has a bound",
        ],
        case: "declaration_forms.rs",
        enforced: Enforced::Formation(formation::check_declaration_forms),
    },
    Rule {
        name: "one_loop",
        refuses: "a second `for` loop in a plan",
        because: "split the work into two plans, or into one loop",
        says: &["a plan has one `for` loop"],
        case: "loop_a_plan_has_one.rs",
        enforced: Enforced::Formation(formation::check_one_loop),
    },
    Rule {
        name: "events_stay_in_their_loop",
        refuses: "an event recorded or waited for both in the loop and outside it",
        because: "a `wait` after the loop would wait for its last iteration only",
        says: &["is used in the loop"],
        case: "loop_event_used_outside_the_loop.rs",
        enforced: Enforced::Formation(formation::check_events_stay_in_their_loop),
    },
    Rule {
        name: "gpu_placement",
        refuses: "in a plan on several GPUs: a device buffer or stream not placed on one, placed past the plan's GPUs, or one buffer or stream placed as a set (`on gpu`); host memory placed; a count of GPUs that is 0; `ranks` beside `gpus`",
        because: "`new` makes each buffer and stream on its GPU once",
        says: &[
            "say which GPU",
            "which is on no GPU",
            "declares no GPUs",
            "past the plan's GPUs",
            "places a set",
            "`ranks` is for a plan that is one rank",
        ],
        case: "gpus_placement_mistakes.rs",
        enforced: Enforced::Formation(gpu_placement::check_gpu_placement),
    },
    Rule {
        name: "sizes_fixed_at_new",
        refuses: "a buffer's length, a set's count, the count of GPUs or a placement that reads a `run` parameter or a slice's length measured at each run",
        because: "`new` allocates every buffer, makes every set and places each on its GPU once",
        says: &["is given to each run, and", "is measured at each run, and"],
        case: "run_parameter_sizes_a_buffer.rs",
        enforced: Enforced::Formation(fixed_at_new::check_sizes_fixed_at_new),
    },
    Rule {
        name: "kernel_declarations",
        refuses: "a kernel declaration that disagrees with the C++",
        because: "name, count, pointer or value, element type, width, signedness, a class's name and layout, each pointer's contract (access and extent); `unsafe kernel` for modules of unknown origin and pointers without a contract",
        says: &["in the C++"],
        case: "signature_element_type.rs",
        enforced: Enforced::Declaration,
    },
    Rule {
        name: "ranges_inside",
        refuses: "a range that provably leaves its buffer, or runs backwards",
        because: "other ranges are checked by `new`, as errors naming the op",
        says: &["reaches past the end of", "starts after it ends"],
        case: "bounds_range_leaves_the_buffer.rs",
        enforced: Enforced::Check(bounds::check_ranges_inside),
    },
    Rule {
        name: "loop_ranges_inside",
        refuses: "in a loop, a range that some `k` takes past its buffer's end",
        because: "every iteration's ranges must provably fit",
        says: &["in the loop, the range"],
        case: "loop_chunk_leaves_buffer.rs",
        enforced: Enforced::Check(bounds::check_loop_ranges_inside),
    },
    Rule {
        name: "extents_fit",
        refuses: "a launch whose buffer is provably shorter than its parameter's extent",
        because: "other extents are checked by `new`, or by each `run` where a run's size decides; so is an empty grid given an `&out` range to write",
        says: &["(its extent), and"],
        case: "contract_count_larger_than_its_range.rs",
        enforced: Enforced::Check(bounds::check_extents_fit),
    },
    Rule {
        name: "collective_groups_apart",
        refuses: "a receive that writes what another send or receive of its NCCL group touches",
        because: "NCCL runs a group's calls at once, in no order",
        says: &["are sends and receives of one NCCL group"],
        case: "collective_mistakes.rs",
        enforced: Enforced::Check(collectives::check_collective_groups_apart),
    },
    Rule {
        name: "collective_memory",
        refuses: "a collective in a plan without `gpus` or `ranks`, on host memory, of a type NCCL does not know, or of two types",
        because: "`new` checks that every GPU takes part, lengths, roots and peers",
        says: &[
            "needs ranks to take part",
            "reads and writes device memory",
            "which NCCL does not move or reduce",
            "elements and receives",
        ],
        case: "collective_mistakes.rs",
        enforced: Enforced::Check(collectives::check_collective_memory),
    },
    Rule {
        name: "no_sends_in_ranks_plans",
        refuses: "a `send` or `recv` in a `ranks` plan",
        because: "every rank runs the same plan and would name the same peer, so no send would meet its receive",
        says: &["every rank of the job runs this same plan"],
        case: "collective_send_in_a_ranks_plan.rs",
        enforced: Enforced::Check(collectives::check_no_sends_in_ranks_plans),
    },
    Rule {
        name: "copy_shapes",
        refuses: "a copy between different element types, or ranges of different lengths",
        because: "lengths are compared symbolically: `n / 2` and `n - n / 2` differ for odd `n`",
        says: &["the element types differ", "elements into"],
        case: "copy_lengths_differ.rs",
        enforced: Enforced::Check(copies::check_copy_shapes),
    },
    Rule {
        name: "copy_overlap",
        refuses: "a copy whose source and destination overlap",
        because: "",
        says: &["may overlap"],
        case: "copy_source_and_destination_overlap.rs",
        enforced: Enforced::Check(copies::check_copy_overlap),
    },
    Rule {
        name: "writes_to_read_only",
        refuses: "a copy or fill into a caller's `&[T]`",
        because: "borrow it `&mut [T]` in the plan's parameters",
        says: &["read-only slice"],
        case: "copy_into_read_only_slice.rs",
        enforced: Enforced::Check(copies::check_writes_to_read_only),
    },
    Rule {
        name: "host_step_borrows",
        refuses: "a host step listing a buffer twice, or borrowing a read-only slice `&mut`",
        because: "",
        says: &[
            "listed twice in this host step",
            "read-only slice, and this host step",
        ],
        case: "host_step_lists_a_buffer_twice.rs",
        enforced: Enforced::Check(host_steps::check_host_step_borrows),
    },
    Rule {
        name: "kernels_reach_their_memory",
        refuses: "a kernel argument in pageable, unmapped pinned, or caller memory",
        because: "the GPU cannot reach it",
        says: &["cannot reach"],
        case: "reach_kernel_on_pageable_memory.rs",
        enforced: Enforced::Check(reach::check_kernels_reach_their_memory),
    },
    Rule {
        name: "stream_ops_on_their_memory",
        refuses: "a copy of pageable memory in a stream block, or a fill of host memory there",
        because: "the copy would silently block: make it `pinned` or `registered`; a fill in a stream block writes device memory",
        says: &[
            "would not be asynchronous",
            "a fill in a stream block writes device memory",
        ],
        case: "reach_async_copy_of_pageable_memory.rs",
        enforced: Enforced::Check(reach::check_stream_ops_on_their_memory),
    },
    Rule {
        name: "host_steps_on_host_memory",
        refuses: "a host step given device memory",
        because: "the CPU cannot touch it: copy it to a host buffer first",
        says: &["which the CPU cannot touch"],
        case: "reach_host_step_on_device_memory.rs",
        enforced: Enforced::Check(reach::check_host_steps_on_host_memory),
    },
    Rule {
        name: "write_combined_memory_is_not_read",
        refuses: "a device-to-host copy into write-combined memory, or a host step or synchronous copy reading it (`&` or `&mut`)",
        because: "the CPU reads it uncached: a step that only writes it borrows it `&out`",
        says: &["write-combined"],
        case: "reach_results_into_write_combined_memory.rs",
        enforced: Enforced::Check(reach::check_write_combined_memory_is_not_read),
    },
    Rule {
        name: "gpu_reach",
        refuses: "in a plan on several GPUs: a kernel given another GPU's memory without `peer gpu;`, a copy, fill or collective on a stream of another GPU than its memory's, a launch outside stream blocks",
        because: "where the checks cannot show two placements equal, they refuse and say so",
        says: &["runs on", "outside stream blocks"],
        case: "gpus_kernel_given_another_gpus_memory.rs",
        enforced: Enforced::Check(gpus::check_gpu_reach),
    },
    Rule {
        name: "kernel_parameter_count",
        refuses: "a kernel of more parameters than memplan passes",
        because: "pass a pointer to a struct of the rest, or split the kernel",
        says: &["parameters, more than the"],
        case: "kernel_with_too_many_parameters.rs",
        enforced: Enforced::Check(launch::check_kernel_parameter_count),
    },
    Rule {
        name: "launch_arguments",
        refuses: "a launch whose arguments disagree with the kernel's declaration",
        because: "count, buffer or value, element type, writes to read-only memory, a count cast to another integer type than its parameter's",
        says: &[
            "arguments, and",
            "takes `",
            "read-only",
            "this count is cast to",
            "is a value (`",
            "so this argument must be a buffer of the plan",
        ],
        case: "launch_argument_count.rs",
        enforced: Enforced::Check(launch::check_launch_arguments),
    },
    Rule {
        name: "computed_once",
        refuses: "an expression `new` computes once that reads what changes: a fill value or a launch value (not a count) that reads a loop's variable, a launch dimension outside the size arithmetic that reads a loop's variable or a `run` parameter",
        because: "`new` evaluates the plan's Rust once; sizes in the arithmetic (and counts, `(n - c * m) as i32`) are computed at each iteration and each run",
        says: &[
            "and `new` computes it once",
            "is given to each run, and `new` computes",
        ],
        case: "computed_once_reads_what_changes.rs",
        enforced: Enforced::Lowering,
    },
    Rule {
        name: "written_before_read",
        refuses: "a read of device memory no earlier operation wrote",
        because: "written ranges must cover the read",
        says: &["cannot find earlier operations that write"],
        case: "lifetime_read_before_any_write.rs",
        enforced: Enforced::Check(lifetime::check_written_before_read),
    },
    Rule {
        name: "allocation_lifetimes",
        refuses: "use after `free`, a double `free`, an `alloc` never freed",
        because: "the last would leak on every run",
        says: &["after `free", "is freed twice", "never freed"],
        case: "lifetime_use_after_free.rs",
        enforced: Enforced::Check(lifetime::check_allocation_lifetimes),
    },
    Rule {
        name: "waits_after_records",
        refuses: "`wait e` before any `record e`",
        because: "CUDA waits only for records already issued",
        says: &["comes before any `record"],
        case: "order_wait_before_record.rs",
        enforced: Enforced::Check(order::check_waits_after_records),
    },
    Rule {
        name: "unordered_accesses",
        refuses: "two operations on different streams, or on a stream and the host (a host step, a synchronous op), touching overlapping ranges of one buffer, one writing (or allocating, or freeing), that nothing orders",
        because: "both are reported, with the `record`/`wait` or `sync` that orders them",
        says: &[
            "with nothing ordering the two",
            "without waiting for the stream",
            "may still be running",
            "while",
            "may not have allocated",
            "may free it",
            "before the allocation is done",
        ],
        case: "race_two_streams_write_one_buffer.rs",
        enforced: Enforced::Check(race::check_unordered_accesses),
    },
    Rule {
        name: "iterations_apart",
        refuses: "the same between two iterations of a loop, a ring buffer reused before its previous chunk is done included",
        because: "both iterations are named, with the fix",
        says: &["(iteration ", "(a later iteration "],
        case: "loop_race_between_iterations.rs",
        enforced: Enforced::Check(iterations::check_iterations_apart),
    },
];

/// The reference's table of checks: a row per rule.
pub fn table() -> String {
    let mut table = String::from("| refused | because | rule |\n| --- | --- | --- |\n");
    for rule in RULES {
        table.push_str(&format!(
            "| {} | {} | `{}` |\n",
            rule.refuses, rule.because, rule.name
        ));
    }
    table
}
