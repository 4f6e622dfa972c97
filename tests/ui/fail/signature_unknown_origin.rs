// PTX from another tool lists no kernels: a declaration of one cannot be
// checked, so it must be `unsafe kernel`, the user's promise.
use memplan::{Image, memplan};

static FOREIGN: Image = Image::from_ptx(".version 8.0\n.target sm_80\n.address_size 64\n");

memplan! {
    plan P(n: usize) {
        kernel mystery(data: &mut [f32], n: i32) from FOREIGN;
    }
}

fn main() {}
