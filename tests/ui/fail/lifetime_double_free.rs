use memplan::memplan;

memplan! {
    plan P(n: usize) {
        host a: [f32; n] pinned;
        stream s;
        on s {
            alloc tmp: [f32; n];
            copy a -> tmp;
            free tmp;
            free tmp;
        }
    }
}

fn main() {}
