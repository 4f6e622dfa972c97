// An op written where it cannot run and a name not declared are reported
// in the order the plan reads, whichever rule refuses each.
use memplan::memplan;

memplan! {
    plan Order(n: usize) {
        host   a: [f32; n] pinned;
        stream s;
        event  e;
        record e;
        on s { copy a -> nothere; }
    }
}

fn main() {}
