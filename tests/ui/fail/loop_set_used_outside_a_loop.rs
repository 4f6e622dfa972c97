// Sets of streams and events are picked by a loop's variable: outside a
// loop, even a constant index is refused (a set's count may be 0 at `new`),
// and inside one, a set needs an index.
use memplan::memplan;

memplan! {
    plan P(n: usize, k: usize) {
        host   h: [f32; n] pinned;
        device d: [f32; n];
        stream t, s[k];
        event  e[k];
        on t { copy h -> d; record e[0]; }
        on s[0] { copy d -> h; }
        for c in 0..k {
            on s[c % k] { wait e; }
        }
    }
}

fn main() {}
