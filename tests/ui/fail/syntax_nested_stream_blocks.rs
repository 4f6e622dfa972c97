use memplan::memplan;

memplan! {
    plan P(n: usize) {
        stream s1, s2;
        on s1 {
            on s2 { }
        }
    }
}

fn main() {}
