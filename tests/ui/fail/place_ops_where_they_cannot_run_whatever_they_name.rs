// An op written where it cannot run is one error, that it cannot run
// there, whatever it names: a buffer the plan keeps freed, an event or a
// stream not declared, a set without its index or outside the loop.
use memplan::memplan;

memplan! {
    plan OnTheHost(n: usize, r: usize, k: usize) {
        device d: [f32; n];
        stream s;
        event  e[r];
        for c in 0..k {
            on s { fill d with 0.0; record e[c % r]; }
        }
        free d;
        record nothere;
        record e[0];
        wait e;
    }

    plan InAStream(n: usize) {
        host   a: [f32; n] pinned;
        stream s;
        on s {
            fill a with 0.0;
            sync nothere;
            host(&nothere) { }
        }
    }

    plan InALoop(n: usize, k: usize) {
        device d: [f32; n];
        stream s;
        for c in 0..k {
            on s { fill d with 0.0; free d; free nothere; }
        }
    }

    plan Collectives(n: usize, g: usize) {
        gpus   gpu[g];
        device a[g]: [f32; n] on gpu;
        stream s[g] on gpu;
        for i in 0..g {
            on s[i] { fill a[i] with 0.0; }
        }
        all_reduce sum a;
        all_reduce sum a[0];
    }
}

fn main() {}
