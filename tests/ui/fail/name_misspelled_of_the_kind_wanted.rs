use memplan::memplan;

// A misspelled name gets the closest declaration of the kind its place
// wants: `on` wants a stream, `wait` an event, a copy buffers. Where none
// is close, the declaration to write uses the plan's own sizes.
memplan! {
    plan Typos(frames: usize) {
        host   frame: [f32; frames] pinned;
        device decoded: [f32; frames];
        stream frame_stream;
        event  framed;
        on frame_stram {
            copy frame -> decodde;
        }
        on frame_stream {
            wait frames_done;
            record framd;
            copy decoded -> staging;
        }
    }
}

fn main() {}
