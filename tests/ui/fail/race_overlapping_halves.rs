use memplan::memplan;

memplan! {
    plan P(n: usize) {
        host a: [f32; n] pinned;
        device d: [f32; n];
        stream s1, s2;
        on s1 {
            copy a[..n / 2 + 1] -> d[..n / 2 + 1];
        }
        on s2 {
            copy a[n / 2..] -> d[n / 2..];
        }
    }
}

fn main() {}
