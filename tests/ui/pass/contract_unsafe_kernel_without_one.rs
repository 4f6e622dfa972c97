// A kernel whose source states no contract is declared `unsafe kernel`:
// the extent written here is then the user's promise, which the checks
// use as they would a contract.
use memplan::memplan;

memplan! {
    plan P(n: usize) {
        unsafe kernel uncontracted(data: &mut [f32; n], n: i32) from memplan_kernels::SIGNATURES;
        device d: [f32; n];
        fill d with 0.0;
        launch uncontracted<<<blocks(n, 256), 256>>>(d, n as i32);
    }
}

fn main() {
    let _ = P::new;
}
