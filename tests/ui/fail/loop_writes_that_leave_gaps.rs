// After a loop, what its iterations together wrote counts only where the
// checks can name it. Chunks `2 * c * m..2 * c * m + m` leave a gap of `m`
// after each; a loop that may run no iterations (`0..k`) may write nothing
// of a range that does not move with `c`.

use memplan::memplan;

memplan! {
    plan Gaps(k: usize, m: usize) {
        host   h: [f32; 2 * k * m] pinned, out: [f32; 2 * k * m] pinned;
        device d: [f32; 2 * k * m];
        stream s;
        for c in 0..k {
            on s { copy h[2 * c * m..2 * c * m + m] -> d[2 * c * m..2 * c * m + m]; }
        }
        on s { copy d -> out; }
    }

    plan MaybeNone(k: usize, m: usize) {
        host   h: [f32; m] pinned, out: [f32; m] pinned;
        device d: [f32; m];
        stream s;
        for c in 0..k {
            on s { copy h -> d; }
        }
        on s { copy d -> out; }
    }
}

fn main() {}
