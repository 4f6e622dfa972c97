use memplan::memplan;

memplan! {
    plan P(n: usize) {
        #[cfg(test)]
        device d: [f32; n];
    }
}

fn main() {}
