//! An extent written through a launch's arguments becomes a size of the
//! plan wherever the arguments are written in the plan's arithmetic, a
//! loop's chunk ended by `min` included: the checks then track what the
//! kernel touches, and the runtime computes it at each iteration. Only
//! values the arithmetic cannot follow (a call) leave it to be measured
//! from what the kernel receives.

use memplan_macros_core::expand;

fn lowered(plan: &str) -> String {
    let tokens: proc_macro2::TokenStream = plan.parse().unwrap();
    let expanded = expand(tokens).to_string();
    assert!(!expanded.contains("compile_error"), "{expanded}");
    expanded
}

#[test]
fn chunks_ended_by_min_are_sized_extents() {
    let expanded = lowered(
        "plan Chunked(n: usize, m: usize, k: usize) {
            kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
            device d: [f32; n];
            stream s;
            fill d with 0.0;
            for c in 0..k {
                let r = c * m..min(c * m + m, n);
                on s {
                    launch process_data<<<blocks(r.len(), 256), 256>>>(d[r], r.len() as i32);
                }
            }
        }",
    );
    assert!(expanded.contains("Extent ("), "{expanded}");
    assert!(!expanded.contains("Measured"), "{expanded}");
}

#[test]
fn a_count_from_a_call_is_measured() {
    let expanded = lowered(
        "plan FromCall(n: usize) {
            kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
            device d: [f32; n];
            fill d with 0.0;
            launch process_data<<<1, 256>>>(d, count());
        }",
    );
    assert!(expanded.contains("Measured"), "{expanded}");
}
