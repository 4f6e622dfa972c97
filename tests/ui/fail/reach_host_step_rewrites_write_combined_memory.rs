use memplan::memplan;

// `&mut` means what it means in Rust: the step may read the buffer too, and
// the host reads write-combined memory uncached. A step that only writes
// borrows it `&out`.
memplan! {
    plan Doubling(n: usize) {
        host staging: [f32; n] pinned(write_combined);
        device d: [f32; n];
        host(&mut staging) {
            for x in staging.iter_mut() {
                *x *= 2.0;
            }
        }
        copy staging -> d;
    }
}

fn main() {}
