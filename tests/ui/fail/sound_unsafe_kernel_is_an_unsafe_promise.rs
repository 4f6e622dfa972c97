// `unsafe kernel` is a promise the compiler cannot check, like an `unsafe`
// block: a crate that forbids unsafe code cannot make it.
#![forbid(unsafe_code)]

use memplan::{Image, memplan};

static FOREIGN: Image = Image::from_ptx(".version 8.0\n.target sm_80\n.address_size 64\n");

memplan! {
    plan P(n: usize) {
        unsafe kernel mystery(data: &mut [f32], n: i32) from FOREIGN;
    }
}

fn main() {}
