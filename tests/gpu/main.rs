//! GPU integration tests. One binary with its own harness (see harness.rs):
//! on a machine without a GPU every test shows as ignored, with the reason.

mod harness;
mod smoke;

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let tests = [smoke::TESTS].concat();
    libtest_mimic::run(&args, harness::trials(&tests)).exit();
}
