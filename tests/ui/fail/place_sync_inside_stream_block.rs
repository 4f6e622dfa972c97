use memplan::memplan;

memplan! {
    plan P(n: usize) {
        stream s;
        on s {
            sync s;
        }
    }
}

fn main() {}
