// The ring of the other pass cases written another way: other names, the
// chunk's arithmetic in another order, a set's index spelled in ways that
// mean the same; and a plan whose loop is empty.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    plan Other(size: usize, chunks: usize, width: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   source: [f32; size * chunks] pinned, sink: [f32; chunks * size] pinned;
        device staging[width]: [f32; size];
        stream copy_in, work[width];
        event  arrived[width], drained[width];
        for chunk in 0..chunks {
            on copy_in {
                wait drained[chunk % width];
                copy source[chunk * size..(1 + chunk) * size] -> staging[(chunk) % width];
                record arrived[chunk % (width)];
            }
            on work[(chunk % width)] {
                wait arrived[chunk % width];
                launch process_data<<<blocks(size, 128), 128>>>(staging[chunk % width], size as i32);
                copy staging[chunk % width] -> sink[size * chunk..size * chunk + size];
                record drained[chunk % width];
            }
        }
    }

    plan Empty(n: usize, k: usize) {
        host   a: [f32; n] pinned;
        device d: [f32; n];
        stream s;
        on s { copy a -> d; }
        for c in 0..k { }
        sync all;
        copy d -> a;
    }
}

fn main() {
    let _ = (Other::new, Empty::new);
}
