// A count of GPUs that a run gives is one error of its own: what it
// reads as a size (here 0, from a value that is not one) says nothing of
// how many GPUs `new` has, so neither "declares no GPUs" nor "past the
// plan's GPUs" is said of it.
use memplan::memplan;

memplan! {
    plan RunValue(n: usize, run x: f32) {
        gpus   gpu[x];
        device d: [f32; n] on gpu[0];
        stream s on gpu[0];
        on s { fill d with 0.0; }
    }

    plan RunOne(n: usize, run m: usize) {
        gpus   gpu[m * 0 + 1];
        device d: [f32; n] on gpu[1];
        stream s on gpu[0];
        on s { fill d with 0.0; }
    }
}

fn main() {}
