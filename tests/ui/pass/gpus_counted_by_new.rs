// A plan on GPUs counted by a size `new` takes: a count of 0 compiles (the
// macro cannot know it), and `new` refuses it by name, before it touches
// a GPU, so this runs without one.
#![deny(warnings)]
use memplan::prelude::*;
use memplan::Fault;

memplan! {
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
}

fn main() {
    let Err(error) = Spread::new(&[], 256, 0) else {
        panic!("a plan on no GPUs was made");
    };
    assert_eq!(error.fault(), &Fault::NoGpus { given: 0 }, "{error}");
    let text = error.to_string();
    assert!(text.contains("gpus gpu[g]"), "the error does not name the declaration: {text}");
    assert!(text.contains("needs at least one"), "{text}");
    // A count above 0 is checked against the contexts given.
    let Err(error) = Spread::new(&[], 256, 2) else {
        panic!("a plan on 2 GPUs was made with no context");
    };
    assert_eq!(error.fault(), &Fault::GpuCount { declared: 2, given: 0 }, "{error}");
}
