use memplan::memplan;

// Code inside a plan (host steps, fill values, launch arguments) sees the
// buffers a host step lists and the plan's sizes and values: not the plan
// itself, and not the caller's slices, which queued work may be using.
memplan! {
    plan Hidden(n: usize, out: &mut [f32; n] registered) {
        host c: [f32; n] pinned, t: [f32; 1] pinned;
        device d: [f32; n], e: [f32; n];
        stream s;
        fill d with 1.0;
        on s {
            copy d -> out;
            copy d -> c;
        }
        host(&mut t) { t[0] = self.c[0]; }
        fill e with out[1];
        sync all;
    }
}

fn main() {}
