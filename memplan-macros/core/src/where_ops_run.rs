//! Where each op may be written: on a stream or on the host, in a loop or
//! not. One wording, for the rule that refuses an op written where it
//! cannot run (`check/formation.rs`, on the IR) and for the builder, which
//! refuses such an op itself where its names do not resolve
//! (`ir/build/ops.rs`). It depends on neither, so neither depends on the
//! other.

/// What of an op says where it can run: its word, and for messages the
/// event of a `record` or `wait` and the label of a collective.
pub enum OpWord<'a> {
    Record(String),
    Wait(String),
    Sync,
    Alloc,
    Free,
    Collective(&'a str),
    Host,
    Other,
}

/// Why an op cannot run where it is written (on a stream if `in_stream`,
/// else on the host; in the loop if `in_loop`), if it cannot: the message
/// and the help. The builder asks too, of an op whose names do not
/// resolve: such an op is refused in these words, where it is written
/// (`ir/build/ops.rs`).
pub fn cannot_run_there(
    word: &OpWord<'_>,
    in_stream: bool,
    in_loop: bool,
) -> Option<(String, &'static str)> {
    Some(match word {
        OpWord::Alloc | OpWord::Free if in_loop => (
            "stream-ordered memory is not allocated or freed in a loop".to_owned(),
            "declare a set of device buffers, `device ring[r]: [T; len];`, and use `ring[c % r]`",
        ),
        OpWord::Record(event) | OpWord::Wait(event) if !in_stream => {
            let verb = match word {
                OpWord::Record(_) => "record",
                _ => "wait",
            };
            (
                format!(
                    "`{verb} {event}` must be in a stream block: events mark points in a stream"
                ),
                "move it into `on stream { ... }`; the host waits with `sync`",
            )
        }
        OpWord::Sync if in_stream => (
            "`sync` waits on the host, so it cannot be in a stream block".to_owned(),
            "move it after the block; to order two streams, `record` an event on one and `wait` for it on the other",
        ),
        OpWord::Alloc if !in_stream => (
            "`alloc` is stream-ordered, so it must be in a stream block".to_owned(),
            "move it into the `on` block of the stream that first uses the buffer, or declare a `device` buffer",
        ),
        OpWord::Free if !in_stream => (
            "`free` is stream-ordered, so it must be in a stream block".to_owned(),
            "move it into an `on` block, after the buffer's last use",
        ),
        OpWord::Collective(label) if !in_stream => (
            format!("`{label}` is queued on a stream, so it must be in a stream block"),
            "move it into `on s { ... }`, with `s` a stream of the GPU whose buffers it names",
        ),
        OpWord::Host if in_stream => (
            "a host step runs on the CPU, so it cannot be in a stream block".to_owned(),
            "move it after the block, with `sync` before it if it reads what the stream wrote",
        ),
        _ => return None,
    })
}
