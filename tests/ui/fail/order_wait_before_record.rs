use memplan::memplan;

memplan! {
    plan P(n: usize) {
        stream s1, s2;
        event done;
        on s2 {
            wait done;
        }
        on s1 {
            record done;
        }
    }
}

fn main() {}
