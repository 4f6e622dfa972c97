// A host step's body may name the plan's type as `Self`, as it could when
// the steps were a method of `impl memplan::Plan` (15f360a): `Self::SUMMARY`.
use memplan::memplan;

memplan! {
    plan Steps(n: usize) {
        host data: [f32; n] pageable, total: [f32; 1] pageable;
        host(&data, &mut total) {
            let _ = Self::SUMMARY;
            total[0] = data[..n / 2].iter().sum();
        }
    }
}

fn main() {}
