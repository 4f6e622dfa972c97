use memplan::memplan;

// The event exists and is waited for, but recorded before the upload it
// should mark: the help is to move the record, not to declare a new event.
memplan! {
    plan Early(n: usize) {
        host   frames: [f32; n] pinned, out: [f32; n] pinned;
        device d: [f32; n];
        stream upload, compute;
        event  ready;
        on upload {
            record ready;
            copy frames -> d;
        }
        on compute {
            wait ready;
            copy d -> out;
        }
    }

    plan Elsewhere(n: usize) {
        host   frames: [f32; n] pinned, out: [f32; n] pinned;
        device d: [f32; n];
        stream upload, compute, other;
        event  ready;
        on upload {
            copy frames -> d;
        }
        on other {
            record ready;
        }
        on compute {
            wait ready;
            copy d -> out;
        }
    }
}

fn main() {}
