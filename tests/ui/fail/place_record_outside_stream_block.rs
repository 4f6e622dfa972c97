use memplan::memplan;

memplan! {
    plan P(n: usize) {
        event done;
        record done;
    }
}

fn main() {}
