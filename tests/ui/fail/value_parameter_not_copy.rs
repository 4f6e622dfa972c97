use memplan::memplan;

memplan! {
    plan Labelled(n: usize, label: String) {
        host a: [f32; n] pageable;
        host(&mut a) { a[0] = label.len() as f32; }
    }
}

fn main() {}
