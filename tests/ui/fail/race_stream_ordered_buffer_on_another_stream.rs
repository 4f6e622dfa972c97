use memplan::memplan;

memplan! {
    plan P(n: usize) {
        host a: [f32; n] pinned;
        stream s1, s2;
        on s1 {
            alloc tmp: [f32; n];
        }
        on s2 {
            copy a -> tmp;
            free tmp;
        }
    }
}

fn main() {}
