// An event of the loop's iterations, waited for after the loop: the wait
// would order only the last iteration's record.
use memplan::memplan;

memplan! {
    plan Chunks(n: usize, m: usize, k: usize) {
        host   a: [f32; n] pinned, b: [f32; n] pinned;
        device d: [f32; n];
        stream up, down;
        event  loaded;
        for c in 0..k {
            on up {
                copy a[c * m..(c + 1) * m] -> d[c * m..(c + 1) * m];
                record loaded;
            }
        }
        on down {
            wait loaded;
            copy d -> b;
        }
    }
}

fn main() {}
