// Loops after the first share its sets and events: one error at each,
// that it is another loop, and none of indexes or events "elsewhere in
// this loop" (each loop indexes a set by its own variable). An event of
// the first loop used after them is one error more, the first loop's.
use memplan::memplan;

memplan! {
    plan SharedSet(n: usize, m: usize, k: usize, r: usize) {
        host   a: [f32; n] pinned;
        device ring[r]: [f32; m];
        stream s;
        for c in 0..k {
            on s { copy a[c * m..(c + 1) * m] -> ring[c % r]; }
        }
        for d in 0..k {
            on s { copy ring[d % r] -> a[d * m..(d + 1) * m]; }
        }
    }

    plan SharedEvent(n: usize, m: usize, k: usize) {
        host   a: [f32; n] pinned;
        device d: [f32; n];
        stream s, t;
        event  e;
        for c in 0..k {
            on s { copy a[c * m..(c + 1) * m] -> d[c * m..(c + 1) * m]; record e; }
        }
        for c in 0..k {
            on t { wait e; copy d[c * m..(c + 1) * m] -> a[c * m..(c + 1) * m]; }
        }
    }

    plan Three(n: usize, m: usize, k: usize, r: usize) {
        host   a: [f32; n] pinned;
        device ring[r]: [f32; m];
        stream s, lanes[r];
        event  done[r];
        for c in 0..k {
            on lanes[c % r] { copy a[c * m..(c + 1) * m] -> ring[c % r]; record done[c % r]; }
        }
        for d in 0..k {
            on lanes[d % r] { wait done[d % r]; copy ring[d % r] -> a[d * m..(d + 1) * m]; }
        }
        for q in 0..k {
            on s { wait done[q % r]; }
        }
    }

    plan EventAfterBoth(n: usize, m: usize, k: usize) {
        host   a: [f32; n] pinned;
        device d: [f32; n];
        stream s, t;
        event  e;
        for c in 0..k {
            on s { copy a[c * m..(c + 1) * m] -> d[c * m..(c + 1) * m]; record e; }
        }
        for c in 0..k {
            on s { copy a[c * m..(c + 1) * m] -> d[c * m..(c + 1) * m]; record e; }
        }
        on t { wait e; copy d -> a; }
    }
}

fn main() {}
