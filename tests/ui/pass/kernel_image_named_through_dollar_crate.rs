// A plan expanded here from another crate's macro, whose kernel
// declaration names the image through `$crate` and takes the kernel's name
// from here: the check finds the image in the crate that wrote the path
// (this crate has no `ADD_ONE`), not where the name was written.
memplan_kernels::add_one_plan!(AddOne, add_one);

fn main() {
    assert!(AddOne::SUMMARY.contains("launch add_one"));
}
