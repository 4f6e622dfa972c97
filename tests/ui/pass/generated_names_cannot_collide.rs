// A plan's generated items live in a block of their own: items of the
// user's named like them (`FooHost`, `FooHostMut`, `__MemplanState`) stand
// beside the plan, and its views are reached as `memplan::HostView`.
#![deny(warnings)]

use memplan::{HostView, memplan};

#[allow(dead_code)]
struct FooHost;
#[allow(dead_code)]
struct FooHostMut;
#[allow(dead_code)]
struct __MemplanState;

memplan! {
    plan Foo(n: usize) {
        host   data: [f32; n] pinned;
        device d: [f32; n];
        copy data -> d;
    }
}

fn first(view: HostView<'_, Foo>) -> f32 {
    view.data[0]
}

fn main() {
    let _ = (Foo::new, first);
}
