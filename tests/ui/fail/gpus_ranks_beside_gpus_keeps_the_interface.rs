// `ranks` beside `gpus` is one error, and the plan's type keeps the
// interface of a plan on several GPUs: code calling `new` as such adds no
// error of its own.
use memplan::memplan;
use memplan::prelude::*;

memplan! {
    plan Both(n: usize, g: usize) {
        gpus   gpu[g];
        ranks  world;
        device grads[g]: [f32; n] on gpu;
        stream s[g] on gpu;
        for i in 0..g {
            on s[i] { fill grads[i] with 0.0; all_reduce sum grads[i]; }
        }
    }
}

fn main() -> memplan::Result<()> {
    let gpus = (0..Context::count()).map(Context::new).collect::<memplan::Result<Vec<_>>>()?;
    let _plan = Both::new(&gpus, 1 << 20, gpus.len())?;
    Ok(())
}
