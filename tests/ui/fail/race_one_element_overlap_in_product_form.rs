use memplan::memplan;

// Products of sizes are compared as products: these two chunks share
// element `c * w * h`, and the race is reported.
memplan! {
    plan Chunks(c: usize, w: usize, h: usize) {
        host   images: [f32; 2 * c * w * h + 1] pinned;
        device din: [f32; 2 * c * w * h + 1];
        stream first, second;
        on first {
            copy images[0..c * w * h + 1] -> din[0..c * w * h + 1];
        }
        on second {
            copy images[c * w * h..2 * c * w * h] -> din[c * w * h..2 * c * w * h];
        }
    }
}

fn main() {}
