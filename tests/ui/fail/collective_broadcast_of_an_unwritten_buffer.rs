// An in-place broadcast sends the root's buffer. Every process of a
// `ranks` job runs this plan, so the root's `weights` is the one nothing
// wrote: the broadcast would send uninitialised memory to every rank.
use memplan::memplan;

memplan! {
    plan Rank(n: usize) {
        ranks  world;
        host   x: [f32; n] pinned;
        device weights: [f32; n];
        stream s;
        on s {
            broadcast weights from 0;
            copy weights -> x;
        }
    }
}

fn main() {}
