// Run parameters named like the locals of the code memplan generates for a
// run (`given`, `state`, `value`): the generated names are hygienic, so the
// user's are the user's, in the run's expressions too.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    pub plan Named(cap: usize, run given: usize, run state: f32, run value: f32) {
        kernel saxpy(n: i32, a: f32, x: &[f32; n], y: &mut [f32; n]) from memplan_kernels::SAXPY;
        device dx: [f32; cap], dy: [f32; cap];
        stream s;
        on s {
            fill dx[..given] with value;
            fill dy[..given] with state;
            launch saxpy<<<blocks(given, 256), 256>>>(given as i32, state * value, dx[..given], dy[..given]);
        }
    }
}

fn main() {
    let _ = Named::new;
    let _: fn(&mut Named, usize, f32, f32) -> memplan::Result<memplan::RunReport> = Named::run;
}
