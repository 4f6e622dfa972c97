use memplan::memplan;

memplan! {
    plan P(n: usize) {
        host a: [f32; n] pinned, b: [f32; n] pinned;
        stream s1, s2;
        event ready;
        on s1 {
            alloc tmp: [f32; n];
            copy a -> tmp;
            record ready;
        }
        on s2 {
            wait ready;
            copy tmp -> b;
        }
        on s1 {
            free tmp;
        }
    }
}

fn main() {}
